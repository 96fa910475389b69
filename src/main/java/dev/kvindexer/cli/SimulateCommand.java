package dev.kvindexer.cli;

import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineHashKind;
import dev.kvindexer.sim.PromptSource;
import dev.kvindexer.sim.RegisterClient;
import dev.kvindexer.sim.ReplayStyle;
import dev.kvindexer.sim.Simulation;
import dev.kvindexer.sim.SimulationConfig;
import dev.kvindexer.sim.TraceBlocks;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code simulate}: runs simulated vLLM/SGLang engines that publish real KV events over ZMQ. */
@Command(
        name = "simulate",
        mixinStandardHelpOptions = true,
        description =
                "Run simulated inference engines (ZMQ PUB + replay ROUTER each) fed by synthetic prompts or a trace.")
public final class SimulateCommand implements Callable<Integer> {
    @Option(names = "--engines", defaultValue = "1", description = "Engine instances (default: ${DEFAULT-VALUE}).")
    int engines;

    @Option(
            names = "--dp-ranks",
            defaultValue = "1",
            description = "Data-parallel ranks per engine, each with its own ports (default: ${DEFAULT-VALUE}).")
    int dpRanks;

    @Option(
            names = "--bind-host",
            defaultValue = "*",
            description = "Address the engines bind (default: ${DEFAULT-VALUE}).")
    String bindHost;

    @Option(
            names = "--advertise-host",
            defaultValue = "127.0.0.1",
            description = "Host put in registered endpoints (default: ${DEFAULT-VALUE}).")
    String advertiseHost;

    @Option(
            names = "--base-port",
            defaultValue = "5557",
            description =
                    "Live port of engine 0 rank 0; engine i rank r uses base + i*dp_ranks + r (default: ${DEFAULT-VALUE}).")
    int basePort;

    @Option(names = "--replay-base-port", description = "First replay port (default: base port + 1000).")
    Integer replayBasePort;

    @Option(
            names = "--format",
            defaultValue = "vllm-map",
            description = "Wire format: vllm-map, vllm-array, sglang (default: ${DEFAULT-VALUE}).")
    String format;

    @Option(
            names = "--hash-kind",
            defaultValue = "sequence",
            description =
                    "Engine block hashes: sequence (Dynamo mocker), random (vLLM-like, per process), sha256-cbor (vLLM's "
                            + "with PYTHONHASHSEED=0, as the C++ Mooncake Conductor recomputes them: --register then "
                            + "registers with its msgpack API, and --sample-query writes its msgpack body), sglang (SGLang's page "
                            + "hash, as its router asks the gRPC port with it) (default: ${DEFAULT-VALUE}).")
    String hashKind;

    @Option(
            names = "--block-size",
            description = "Tokens per block (default: 16, or the trace block size with --trace).")
    Integer blockSize;

    @Option(
            names = "--capacity",
            defaultValue = "1024",
            description = "GPU blocks per engine rank (default: ${DEFAULT-VALUE}).")
    int capacity;

    @Option(names = "--cpu-tier", description = "Offload evicted GPU blocks to a CPU tier.")
    boolean cpuTier;

    @Option(names = "--cpu-capacity", description = "CPU-tier blocks per engine rank (default: 4 x capacity).")
    Integer cpuCapacity;

    @Option(
            names = "--requests",
            description = "Requests to send (default: 1000 synthetic; the whole trace with --trace).")
    Long requests;

    @Option(
            names = "--rate",
            defaultValue = "0",
            description =
                    "Requests (= batches) per second over all engines; 0 = as fast as possible (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(
            names = "--drop-rate",
            defaultValue = "0",
            description = "Fraction of batches not sent live (still replayable) (default: ${DEFAULT-VALUE}).")
    double dropRate;

    @Option(
            names = "--seed",
            defaultValue = "42",
            description = "Seed of prompts, routing, drops and random hashes (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--trace", description = "Mooncake jsonl trace to replay instead of synthetic prompts.")
    Path trace;

    @Option(
            names = "--trace-block-size",
            defaultValue = "512",
            description = "Tokens per trace hash_id (default: ${DEFAULT-VALUE}).")
    int traceBlockSize;

    @Option(
            names = "--restart-after",
            defaultValue = "0",
            description = "Restart an engine after every N of its requests; 0 = never (default: ${DEFAULT-VALUE}).")
    long restartAfter;

    @Option(
            names = "--replay-style",
            defaultValue = "4",
            description =
                    "Replay reply frames: 3 (SGLang, vLLM < 0.26) or 4 (vLLM >= 0.26) (default: ${DEFAULT-VALUE}).")
    int replayStyle;

    @Option(
            names = "--model-name",
            defaultValue = "default",
            description = "Model registered with --register (default: ${DEFAULT-VALUE}).")
    String modelName;

    @Option(
            names = {"--routing-group", "--tenant-id"},
            defaultValue = "default",
            description = "Routing group registered with --register (default: ${DEFAULT-VALUE}).")
    String routingGroup;

    @Option(
            names = "--register-select",
            paramLabel = "URL",
            description = "Add each engine instance to the catalog of the selection service at URL (POST /workers, "
                    + "its ranks' publishers as kv_events_endpoints).")
    java.net.URI registerSelect;

    @Option(
            names = "--instance-id-base",
            defaultValue = "1",
            description = "Instance id of engine 0; engine i gets base + i (default: ${DEFAULT-VALUE}).")
    long instanceIdBase;

    @Option(
            names = "--register",
            description = "Indexer URL to POST /register every engine rank to, e.g. http://127.0.0.1:8090.")
    URI register;

    @Option(names = "--topic", defaultValue = "", description = "Topic frame of live messages (default: empty).")
    String topic;

    @Option(
            names = "--warmup-ms",
            defaultValue = "1000",
            description =
                    "Pause between binding (and registering) and the first request, for subscribers to join (default: ${DEFAULT-VALUE}).")
    long warmupMs;

    @Option(
            names = "--hold-ms",
            defaultValue = "0",
            description =
                    "Keep the engines up this long after the last request, to serve replays (default: ${DEFAULT-VALUE}).")
    long holdMs;

    @Option(
            names = "--sample-query",
            paramLabel = "FILE",
            description = "Write a POST /query body for the first prompt to be sent (before sending it), to try "
                    + "against the indexer.")
    java.nio.file.Path sampleQuery;

    static BatchEncoder.Format parseFormat(String s) {
        return switch (s.trim().toLowerCase(Locale.ROOT)) {
            case "vllm-map" -> BatchEncoder.Format.VLLM_MAP;
            case "vllm-array" -> BatchEncoder.Format.VLLM_ARRAY;
            case "sglang" -> BatchEncoder.Format.SGLANG_ARRAY;
            default -> throw new IllegalArgumentException("--format must be vllm-map, vllm-array or sglang: " + s);
        };
    }

    SimulationConfig config() {
        int bs = blockSize != null ? blockSize : trace != null ? traceBlockSize : 16;
        long count = requests != null ? requests : trace != null ? 0 : 1000;
        int hostCapacity = cpuTier ? (cpuCapacity != null ? cpuCapacity : 4 * capacity) : 0;
        EngineHashKind kind;
        try {
            kind = EngineHashKind.parse(hashKind);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "--hash-kind must be sequence, random, sha256-cbor or sglang: " + hashKind);
        }
        return new SimulationConfig(
                engines,
                dpRanks,
                bindHost,
                advertiseHost,
                basePort,
                replayBasePort != null ? replayBasePort : basePort + 1000,
                parseFormat(format),
                kind,
                bs,
                capacity,
                hostCapacity,
                count,
                rate,
                dropRate,
                seed,
                trace,
                traceBlockSize,
                restartAfter,
                ReplayStyle.ofFrames(replayStyle),
                modelName,
                routingGroup,
                instanceIdBase,
                register,
                topic,
                Duration.ofMillis(warmupMs),
                Duration.ofMillis(holdMs));
    }

    @Override
    public Integer call() throws Exception {
        SimulationConfig config;
        try {
            config = config();
            if (trace == null && traceBlockSize != TraceBlocks.MOONCAKE_BLOCK_SIZE) {
                System.err.println("kvindexer simulate: --trace-block-size has no effect without --trace");
            }
        } catch (IllegalArgumentException e) {
            System.err.println("kvindexer simulate: " + e.getMessage());
            return 2;
        }
        Simulation sim;
        try {
            sim = Simulation.start(config);
        } catch (RuntimeException e) {
            System.err.println("kvindexer simulate: " + e.getMessage());
            return 1;
        }
        CountDownLatch finished = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(shutdownHook(sim, finished));
        try (sim;
                PromptSource prompts = sim.openPrompts()) {
            announce(sim, config);
            Thread.sleep(config.warmup().toMillis());
            Simulation.Summary summary = sim.run(prompts);
            print(summary);
            holdOn(sim, config.hold());
        } catch (RegisterClient.Refused e) {
            System.err.println("kvindexer simulate: the indexer refused a registration: " + e.getMessage());
            return 1;
        } catch (java.io.IOException e) {
            // A refused connection carries no message: name the exception too.
            System.err.println("kvindexer simulate: cannot reach the indexer at " + config.register() + ": " + e);
            return 1;
        } finally {
            finished.countDown();
        }
        return 0;
    }

    /** Stops the simulation on JVM shutdown, then waits up to 15 s for {@link #call()} to finish. */
    private static Thread shutdownHook(Simulation sim, CountDownLatch finished) {
        return new Thread(
                () -> {
                    sim.stop();
                    try {
                        finished.await(15, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "simulate-shutdown");
    }

    /** Prints each engine rank's endpoints, registers them where asked, and writes the sample query. */
    private void announce(Simulation sim, SimulationConfig config) throws java.io.IOException, InterruptedException {
        sim.engines()
                .forEach(e -> System.out.printf(
                        "engine %s dp_rank %d: live %s replay %s%n",
                        Long.toUnsignedString(e.instanceId()), e.dpRank(), e.endpoint(), e.replayEndpoint()));
        if (config.register() != null) {
            sim.registerAll();
            System.out.println("registered " + sim.engines().size() + " engine ranks with " + config.register());
        }
        if (registerSelect != null) {
            new RegisterClient(registerSelect).catalog(sim.engines(), dpRanks, modelName, routingGroup);
            System.out.println("added " + engines + " workers to the selection service at " + registerSelect);
        }
        // Written before the run, so that a long or endless run can be queried while it goes on.
        if (sampleQuery != null) {
            writeSampleQuery(sim);
        }
    }

    /** Keeps the engines up for {@code hold} after the run, or until the simulation is stopped. */
    private static void holdOn(Simulation sim, Duration hold) throws InterruptedException {
        long holdUntil = System.nanoTime() + hold.toNanos();
        while (System.nanoTime() < holdUntil && !sim.stopping()) {
            Thread.sleep(Math.min(100, Math.max(1, (holdUntil - System.nanoTime()) / 1_000_000)));
        }
    }

    /** The same seed gives the same prompts, so the first one of a fresh source is the first one sent. */
    private void writeSampleQuery(Simulation sim) throws java.io.IOException {
        try (PromptSource again = sim.openPrompts()) {
            int[] first = again.next();
            if (first == null) {
                return;
            }
            if (EngineHashKind.parse(hashKind) == EngineHashKind.SHA256_CBOR) {
                java.nio.file.Files.write(sampleQuery, conductorQuery(first));
                System.out.println("sample msgpack /query body of the C++ Conductor (" + first.length
                        + " tokens) written to " + sampleQuery);
                return;
            }
            io.vertx.core.json.JsonArray tokens = new io.vertx.core.json.JsonArray();
            for (int t : first) {
                tokens.add(Integer.toUnsignedLong(t));
            }
            String body = new io.vertx.core.json.JsonObject()
                    .put("model_name", modelName)
                    .put("routing_group", routingGroup)
                    .put("token_ids", tokens)
                    .encode();
            java.nio.file.Files.writeString(sampleQuery, body);
            System.out.println("sample /query body (" + first.length + " tokens) written to " + sampleQuery);
        }
    }

    /** The C++ Conductor's /query body: model, block size, the tokens as little-endian u32 in a bin. */
    private byte[] conductorQuery(int[] tokens) throws java.io.IOException {
        java.nio.ByteBuffer bin =
                java.nio.ByteBuffer.allocate(tokens.length * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int t : tokens) {
            bin.putInt(t);
        }
        try (org.msgpack.core.MessageBufferPacker p = org.msgpack.core.MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(4);
            p.packString("model").packString(modelName);
            p.packString("tenant_id").packString(routingGroup == null ? "" : routingGroup);
            p.packString("block_size").packInt(config().blockSize());
            p.packString("token_ids").packBinaryHeader(bin.capacity()).writePayload(bin.array());
            return p.toByteArray();
        }
    }

    private static void print(Simulation.Summary s) {
        System.out.printf(
                "sent %d requests in %.1f s%n", s.requests(), s.elapsed().toMillis() / 1000.0);
        for (Simulation.EngineSummary e : s.engines()) {
            System.out.printf(
                    "engine %s dp_rank %d: %d batches, %d dropped live, %d restarts, holds %d GPU + %d CPU blocks%n",
                    Long.toUnsignedString(e.instanceId()),
                    e.dpRank(),
                    e.batches(),
                    e.dropped(),
                    e.restarts(),
                    e.deviceBlocks(),
                    e.hostBlocks());
        }
    }
}
