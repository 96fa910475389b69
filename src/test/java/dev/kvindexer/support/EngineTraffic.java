package dev.kvindexer.support;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.sim.PromptSource;
import dev.kvindexer.sim.SimulatedEngine;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Prompts submitted to engines in turn from a thread of its own, paced, while a test kills and restarts nodes; closing
 * it stops the traffic and leaves every engine idle with a last batch that went out live, so that a hole behind it
 * has been noticed (a hole shows only at the next live batch).
 */
public final class EngineTraffic implements AutoCloseable {
    private final List<SimulatedEngine> engines;
    private final PromptSource prompts;
    private final AtomicBoolean publishing = new AtomicBoolean(true);
    /** Prompts submitted so far, to all engines in turn. */
    private final AtomicLong submitted = new AtomicLong();
    /** The traffic holds once {@link #submitted} reaches this, until {@link #unlimited}. */
    private final AtomicLong stopAt = new AtomicLong(Long.MAX_VALUE);

    private volatile long pauseNanos;
    private final Thread thread;
    private boolean closed;

    private EngineTraffic(List<SimulatedEngine> engines, PromptSource prompts, Duration pause) {
        this.engines = List.copyOf(engines);
        this.prompts = prompts;
        this.pauseNanos = pause.toNanos();
        this.thread = new Thread(this::run, "engine-traffic");
    }

    private void run() {
        while (publishing.get()) {
            long i = submitted.get();
            if (i >= stopAt.get()) {
                LockSupport.parkNanos(1_000_000);
                continue;
            }
            engines.get((int) (i % engines.size())).submit(prompts.next());
            submitted.incrementAndGet();
            // Shapes the load (engines keep publishing while nodes replay); it synchronises nothing.
            LockSupport.parkNanos(pauseNanos);
        }
    }

    /** Starts submitting {@code prompts} to {@code engines} in turn, one every {@code pause}. */
    public static EngineTraffic start(List<SimulatedEngine> engines, PromptSource prompts, Duration pause) {
        EngineTraffic t = new EngineTraffic(engines, prompts, pause);
        t.thread.start();
        return t;
    }

    /** From now on one prompt every {@code pause}. */
    public void pace(Duration pause) {
        pauseNanos = pause.toNanos();
    }

    /**
     * From now on at most {@code prompts} more prompts per engine, then the traffic holds: bounds what an engine
     * publishes while a node is away, however long it takes to come back.
     */
    public void limit(long prompts) {
        stopAt.set(submitted.get() + prompts * engines.size());
    }

    /** Waits until the traffic holds at its {@link #limit}: every prompt it allows has been submitted. */
    public void awaitLimit(String what) {
        Await.until(what, Await.PATIENCE.multipliedBy(4), () -> submitted.get() >= stopAt.get());
    }

    /** Lifts {@link #limit}. */
    public void unlimited() {
        stopAt.set(Long.MAX_VALUE);
    }

    /** Waits until every engine has published {@code batches} more batches than when this was called. */
    public void awaitBatches(String what, long batches) {
        long[] from = engines.stream().mapToLong(SimulatedEngine::totalBatches).toArray();
        Await.until(what, Await.PATIENCE, () -> {
            for (int i = 0; i < from.length; i++) {
                if (engines.get(i).totalBatches() < from[i] + batches) {
                    return false;
                }
            }
            return true;
        });
    }

    /**
     * Stops the traffic, then makes sure each engine's last batch is one its drop schedule sends live (submitting more
     * where it is not), and waits until every engine has published everything.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        publishing.set(false);
        try {
            thread.join();
            for (SimulatedEngine e : engines) {
                endLive(e, prompts);
            }
        } catch (InterruptedException e) {
            // An AutoCloseable's close should not throw InterruptedException (javac -Xlint:try): fail the test instead.
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while stopping the traffic", e);
        }
    }

    /** Leaves {@code e} idle with a last batch that went out live, submitting from {@code prompts} as needed. */
    public static void endLive(SimulatedEngine e, PromptSource prompts) throws InterruptedException {
        assertTrue(e.awaitIdle(Await.PATIENCE), "engine " + e.endpoint() + " idle");
        // The schedule is a pure function of (seed, seq): whether the last batch went out is known without asking.
        while (e.generationBatches() > 0 && e.dropSchedule(e.generation()).drops(e.generationBatches() - 1)) {
            e.submit(prompts.next());
            assertTrue(e.awaitIdle(Await.PATIENCE), "engine " + e.endpoint() + " idle");
        }
    }
}
