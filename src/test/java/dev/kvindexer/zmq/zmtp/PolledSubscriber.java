package dev.kvindexer.zmq.zmtp;

import dev.kvindexer.net.NetworkBudget;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/** A subscriber polled on a thread of its own, as an ingest thread polls it, recording what it hears. */
final class PolledSubscriber implements ZmtpSubscriber.Events, AutoCloseable {
    final List<List<byte[]>> messages = new CopyOnWriteArrayList<>();
    final ConcurrentLinkedQueue<ZmtpFailure> failures = new ConcurrentLinkedQueue<>();
    final AtomicInteger connects = new AtomicInteger();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    final NetworkBudget budget;
    private final ZmtpSubscriber subscriber;
    private final Thread thread;
    private volatile boolean running = true;

    PolledSubscriber(ZmtpConfig settings) {
        this(settings, NetworkBudget.unbounded());
    }

    PolledSubscriber(ZmtpConfig settings, NetworkBudget budget) {
        this.budget = budget;
        try {
            subscriber = new ZmtpSubscriber(settings, budget, this);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        thread = new Thread(this::loop, "zmtp-subscriber-test");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        try {
            while (running) {
                Runnable r;
                while ((r = tasks.poll()) != null) {
                    r.run();
                }
                subscriber.poll(20);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            subscriber.close();
        }
    }

    ZmtpEndpoint open(String endpoint) {
        return call(s -> {
            try {
                return s.open(endpoint, endpoint);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private <T> T call(Function<ZmtpSubscriber, T> f) {
        CompletableFuture<T> result = new CompletableFuture<>();
        tasks.add(() -> result.complete(f.apply(subscriber)));
        subscriber.wakeup();
        return result.orTimeout(10, TimeUnit.SECONDS).join();
    }

    @Override
    public void connected(ZmtpEndpoint endpoint) {
        connects.incrementAndGet();
    }

    @Override
    public void disconnected(ZmtpEndpoint endpoint, ZmtpFailure why, boolean established) {
        failures.add(why);
    }

    @Override
    public void message(ZmtpEndpoint endpoint, List<byte[]> frames, long held) {
        messages.add(frames);
        budget.release(held);
    }

    @Override
    public void close() {
        running = false;
        subscriber.wakeup();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
