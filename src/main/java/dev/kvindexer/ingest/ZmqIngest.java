package dev.kvindexer.ingest;

import dev.kvindexer.cluster.ReadyGate;
import dev.kvindexer.metrics.EventCounters;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.zeromq.ZContext;

/**
 * The node's ZMQ ingest: a fixed pool of {@link PollerThread}s sharing all listeners, so thousands of
 * engines never mean thousands of threads.
 */
public final class ZmqIngest implements AutoCloseable {
    private final ZContext ctx = new ZContext();
    private final List<PollerThread> threads = new ArrayList<>();
    private final Map<Listener, PollerThread> owners = new ConcurrentHashMap<>();
    private final InFlightBatches inFlight;
    private final ReplayClient replays;

    /**
     * @param maxInFlight bound on decoded batches sent but not yet taken by partitions
     * @param listeners   finds a stream's current listener, for replay errors
     */
    public ZmqIngest(Vertx vertx, int threadCount, int maxInFlight, EventCounters counters,
                     ReplayClient.ListenerDirectory listeners, ReadyGate gate) {
        this.inFlight = new InFlightBatches(maxInFlight);
        this.replays = new ReplayClient(ctx, vertx.eventBus(), counters, listeners, 2);
        for (int i = 0; i < threadCount; i++) {
            PollerThread t = new PollerThread("kvindexer-ingest-" + i, ctx, vertx.eventBus(), counters, inFlight, gate);
            threads.add(t);
            t.start();
        }
    }

    /** Starts receiving for the listener on the least loaded thread; completes once its socket is open or failed. */
    public Future<Void> start(Listener listener) {
        PollerThread t = threads.stream().min(Comparator.comparingInt(PollerThread::load)).orElseThrow();
        owners.put(listener, t);
        Promise<Void> done = Promise.promise();
        t.add(listener, done);
        return done.future();
    }

    /** Closes the listener's socket; completes when nothing more will be received from it. */
    public Future<Void> stop(Listener listener) {
        PollerThread t = owners.remove(listener);
        if (t == null) {
            return Future.succeededFuture();
        }
        Promise<Void> done = Promise.promise();
        t.remove(listener, done);
        return done.future();
    }

    public int threadCount() {
        return threads.size();
    }

    public InFlightBatches inFlight() {
        return inFlight;
    }

    public ReplayClient replays() {
        return replays;
    }

    @Override
    public void close() {
        replays.close();
        threads.forEach(PollerThread::shutdown);
        for (PollerThread t : threads) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        ctx.close();
    }
}
