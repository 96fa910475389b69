package dev.kvindexer.sim;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A whole simulation: {@code engines} instances × {@code dpRanks} ranks. Engine i rank r publishes on
 * {@code basePort + i*dpRanks + r} and replays on {@code replayBasePort + i*dpRanks + r}
 * (docs/protocol/zmq.md#data-parallel-port-offset: separate
 * ranges, so a rank's live port never lands on another's replay port). {@code requests} ≤ 0 means "until the prompt
 * source ends"; {@code rate} ≤ 0 means as fast as possible; {@code restartAfter} ≤ 0 never restarts; {@code register}
 * null skips registration; {@code trace} null uses synthetic prompts.
 */
public record SimulationConfig(
        int engines,
        int dpRanks,
        String bindHost,
        String advertiseHost,
        int basePort,
        int replayBasePort,
        BatchEncoder.Format format,
        EngineHashKind hashKind,
        int blockSize,
        int capacity,
        int hostCapacity,
        long requests,
        double rate,
        double dropRate,
        long seed,
        Path trace,
        int traceBlockSize,
        long restartAfter,
        ReplayStyle replayStyle,
        String modelName,
        String routingGroup,
        long instanceIdBase,
        URI register,
        String topic,
        Duration warmup,
        Duration hold) {

    public SimulationConfig {
        if (engines <= 0 || dpRanks <= 0) {
            throw new IllegalArgumentException("--engines and --dp-ranks must be positive");
        }
        int streams = engines * dpRanks;
        if (basePort != 0
                && replayBasePort != 0
                && basePort < replayBasePort + streams
                && replayBasePort < basePort + streams) {
            throw new IllegalArgumentException("live ports " + basePort + ".." + (basePort + streams - 1)
                    + " overlap replay ports " + replayBasePort + ".." + (replayBasePort + streams - 1));
        }
        if (basePort < 0 || replayBasePort < 0 || Math.max(basePort, replayBasePort) + streams - 1 > 65_535) {
            throw new IllegalArgumentException("ports out of range");
        }
    }

    /** The settings of engine {@code index}, rank {@code rank}. Base port 0 means ephemeral ports (tests). */
    public EngineConfig engine(int index, int rank) {
        int offset = index * dpRanks + rank;
        return new EngineConfig(
                instanceIdBase + index,
                rank,
                bindHost,
                advertiseHost,
                basePort == 0 ? 0 : basePort + offset,
                replayBasePort == 0 ? 0 : replayBasePort + offset,
                format,
                hashKind,
                blockSize,
                capacity,
                hostCapacity,
                replayStyle,
                topic,
                dropRate,
                seed,
                ReplayBuffer.DEFAULT_CAPACITY);
    }
}
