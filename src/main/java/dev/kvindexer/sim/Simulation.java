package dev.kvindexer.sim;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs {@code engines × dpRanks} simulated engine ranks and drives prompts into them: each prompt goes to a
 * seeded-random (instance, rank), at a fixed rate or as fast as the engines take them, restarting an instance (all
 * its ranks, like a process) after every {@code restartAfter} of its requests.
 */
public final class Simulation implements AutoCloseable {
    /** What one engine rank did. */
    public record EngineSummary(
            long instanceId,
            int dpRank,
            String endpoint,
            String replayEndpoint,
            long batches,
            long dropped,
            int deviceBlocks,
            int hostBlocks,
            int restarts) {}

    /** What the run did. */
    public record Summary(long requests, Duration elapsed, List<EngineSummary> engines) {}

    private final SimulationConfig config;
    private final List<SimulatedEngine> engines = new ArrayList<>();
    private volatile boolean stopping;

    private Simulation(SimulationConfig config) {
        this.config = config;
    }

    /** Binds every engine rank; on failure closes the ones already started. */
    public static Simulation start(SimulationConfig config) {
        Simulation sim = new Simulation(config);
        try {
            for (int i = 0; i < config.engines(); i++) {
                for (int r = 0; r < config.dpRanks(); r++) {
                    sim.engines.add(SimulatedEngine.start(config.engine(i, r)));
                }
            }
        } catch (RuntimeException e) {
            sim.close();
            throw e;
        }
        return sim;
    }

    public SimulationConfig config() {
        return config;
    }

    /** All ranks, instance-major: index {@code i * dpRanks + r}. */
    public List<SimulatedEngine> engines() {
        return Collections.unmodifiableList(engines);
    }

    public SimulatedEngine engine(int index, int rank) {
        return engines.get(index * config.dpRanks() + rank);
    }

    /** POSTs /register for every rank to {@code config.register()}. */
    public void registerAll() throws IOException, InterruptedException {
        RegisterClient registrar = new RegisterClient(config.register());
        for (SimulatedEngine e : engines) {
            registrar.register(e, config.modelName(), config.routingGroup());
        }
    }

    /** The configured prompt source: the trace if one is set, else synthetic prompts. */
    public PromptSource openPrompts() throws IOException {
        if (config.trace() != null) {
            return new TracePrompts(config.trace(), new TraceBlocks(config.seed(), config.traceBlockSize()));
        }
        return SyntheticPrompts.standard(config.seed(), config.blockSize());
    }

    /**
     * Feeds prompts until {@code config.requests()} are sent, the source ends or {@link #stop()} is called, then waits
     * until every engine has published its work.
     */
    public Summary run(PromptSource prompts) throws InterruptedException {
        long started = System.nanoTime();
        long limit = config.requests() > 0 ? config.requests() : Long.MAX_VALUE;
        long intervalNanos = config.rate() > 0 ? (long) (1e9 / config.rate()) : 0;
        SplittableRandom routing = new SplittableRandom(config.seed());
        long[] perInstance = new long[config.engines()];
        long sent = 0;
        while (!stopping && sent < limit) {
            int[] prompt = prompts.next();
            if (prompt == null) {
                break;
            }
            if (intervalNanos > 0) {
                // Pace against the start time, not the previous send, so slow iterations do not drift the rate.
                long due = started + sent * intervalNanos;
                for (long wait; (wait = due - System.nanoTime()) > 0 && !stopping; ) {
                    LockSupport.parkNanos(wait);
                }
            }
            int instance = routing.nextInt(config.engines());
            int rank = routing.nextInt(config.dpRanks());
            engine(instance, rank).submit(prompt);
            sent++;
            if (config.restartAfter() > 0 && ++perInstance[instance] % config.restartAfter() == 0) {
                for (int r = 0; r < config.dpRanks(); r++) {
                    engine(instance, r).restart();
                }
            }
        }
        for (SimulatedEngine e : engines) {
            while (!e.awaitIdle(Duration.ofSeconds(1))) {
                if (stopping) {
                    break;
                }
            }
        }
        return summary(sent, Duration.ofNanos(System.nanoTime() - started));
    }

    /** Makes {@link #run} stop feeding and return soon; safe from any thread (e.g. a shutdown hook). */
    public void stop() {
        stopping = true;
    }

    public boolean stopping() {
        return stopping;
    }

    public Summary summary(long requests, Duration elapsed) {
        List<EngineSummary> out = new ArrayList<>();
        for (SimulatedEngine e : engines) {
            out.add(new EngineSummary(
                    e.instanceId(),
                    e.dpRank(),
                    e.endpoint(),
                    e.replayEndpoint(),
                    e.totalBatches(),
                    e.droppedBatches(),
                    e.heldDeviceBlocks(),
                    e.heldHostBlocks(),
                    e.generation()));
        }
        return new Summary(requests, elapsed, out);
    }

    /** Closes every engine (each closes its sockets on its own thread). */
    @Override
    public void close() {
        stopping = true;
        engines.forEach(SimulatedEngine::close);
    }
}
