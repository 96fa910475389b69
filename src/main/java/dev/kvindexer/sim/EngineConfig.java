package dev.kvindexer.sim;

import java.util.function.Consumer;

/**
 * Settings of one simulated engine rank. Port 0 binds an ephemeral port (kept across restarts). {@code hostCapacity}
 * 0 disables the CPU tier. Start from {@link #local(long, int)} and adjust with the {@code with...} methods.
 */
public record EngineConfig(
        long instanceId,
        int dpRank,
        String bindHost,
        String advertiseHost,
        int livePort,
        int replayPort,
        BatchEncoder.Format format,
        EngineHashKind hashKind,
        int blockSize,
        int capacity,
        int hostCapacity,
        ReplayStyle replayStyle,
        String topic,
        double dropRate,
        long seed,
        int replayCapacity) {

    public EngineConfig {
        if (blockSize <= 0 || capacity <= 0) {
            throw new IllegalArgumentException("block size and capacity must be positive");
        }
        if (hostCapacity != 0 && hostCapacity < capacity) {
            throw new IllegalArgumentException("host capacity must be 0 or >= capacity");
        }
        new DropSchedule(0, dropRate); // validates the rate
        if (replayCapacity <= 0) {
            throw new IllegalArgumentException("replay capacity must be positive");
        }
    }

    /**
     * Loopback, ephemeral ports, vLLM map era, sequence hashes, block size 16, 1024 blocks, 4-frame replay of the last
     * {@link ReplayBuffer#DEFAULT_CAPACITY} batches.
     */
    public static EngineConfig local(long instanceId, int dpRank) {
        return new EngineConfig(
                instanceId,
                dpRank,
                "127.0.0.1",
                "127.0.0.1",
                0,
                0,
                BatchEncoder.Format.VLLM_MAP,
                EngineHashKind.SEQUENCE,
                16,
                1024,
                0,
                ReplayStyle.FOUR_FRAME,
                "",
                0.0,
                42L,
                ReplayBuffer.DEFAULT_CAPACITY);
    }

    public EngineConfig withPorts(int live, int replay) {
        return with(c -> {
            c.livePort = live;
            c.replayPort = replay;
        });
    }

    public EngineConfig withHosts(String bind, String advertise) {
        return with(c -> {
            c.bindHost = bind;
            c.advertiseHost = advertise;
        });
    }

    public EngineConfig withFormat(BatchEncoder.Format f) {
        return with(c -> c.format = f);
    }

    public EngineConfig withHashKind(EngineHashKind k) {
        return with(c -> c.hashKind = k);
    }

    public EngineConfig withCache(int newBlockSize, int newCapacity, int newHostCapacity) {
        return with(c -> {
            c.blockSize = newBlockSize;
            c.capacity = newCapacity;
            c.hostCapacity = newHostCapacity;
        });
    }

    public EngineConfig withReplayStyle(ReplayStyle s) {
        return with(c -> c.replayStyle = s);
    }

    public EngineConfig withTopic(String t) {
        return with(c -> c.topic = t);
    }

    public EngineConfig withDrops(double rate, long newSeed) {
        return with(c -> {
            c.dropRate = rate;
            c.seed = newSeed;
        });
    }

    /** How many of its last batches the engine can replay (vLLM's buffer_steps). */
    public EngineConfig withReplayCapacity(int batches) {
        return with(c -> c.replayCapacity = batches);
    }

    /** The medium a device block is published with. */
    public String deviceMedium() {
        return "GPU";
    }

    /** The medium an offloaded block is published with: SGLang says CPU_PINNED, vLLM says CPU (both host_pinned). */
    public String hostMedium() {
        return format == BatchEncoder.Format.SGLANG_ARRAY ? "CPU_PINNED" : "CPU";
    }

    /**
     * Seed of one engine process: distinct per rank and per restart generation, so {@link EngineHashKind#RANDOM}
     * roots and drop decisions differ as they would between real processes, yet repeat from run to run.
     */
    public long processSeed(int generation) {
        long z = seed;
        z = mix(z ^ instanceId);
        z = mix(z ^ dpRank);
        return mix(z ^ generation);
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }

    /** Every field once, for the withers: each wither names only what it changes. */
    private static final class Copy {
        private long instanceId;
        private int dpRank;
        private String bindHost;
        private String advertiseHost;
        private int livePort;
        private int replayPort;
        private BatchEncoder.Format format;
        private EngineHashKind hashKind;
        private int blockSize;
        private int capacity;
        private int hostCapacity;
        private ReplayStyle replayStyle;
        private String topic;
        private double dropRate;
        private long seed;
        private int replayCapacity;

        private Copy(EngineConfig c) {
            instanceId = c.instanceId;
            dpRank = c.dpRank;
            bindHost = c.bindHost;
            advertiseHost = c.advertiseHost;
            livePort = c.livePort;
            replayPort = c.replayPort;
            format = c.format;
            hashKind = c.hashKind;
            blockSize = c.blockSize;
            capacity = c.capacity;
            hostCapacity = c.hostCapacity;
            replayStyle = c.replayStyle;
            topic = c.topic;
            dropRate = c.dropRate;
            seed = c.seed;
            replayCapacity = c.replayCapacity;
        }

        private EngineConfig build() {
            return new EngineConfig(
                    instanceId,
                    dpRank,
                    bindHost,
                    advertiseHost,
                    livePort,
                    replayPort,
                    format,
                    hashKind,
                    blockSize,
                    capacity,
                    hostCapacity,
                    replayStyle,
                    topic,
                    dropRate,
                    seed,
                    replayCapacity);
        }
    }

    /** These settings with {@code change} made to a copy of them. */
    private EngineConfig with(Consumer<Copy> change) {
        Copy c = new Copy(this);
        change.accept(c);
        return c.build();
    }
}
