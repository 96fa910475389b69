package dev.kvindexer.partition;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.hash.LocalHashes;
import dev.kvindexer.metrics.Spans;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A partition actor of this node, reached through its {@link Mailbox}: commands are queued in the order sent and the
 * actor takes them on its own context; an answer comes back on the asker's context, as an event-bus reply would.
 *
 * <p>Queries do not queue: they read the partition on the caller's thread under the read lock, while the actor takes
 * the write lock for the commands that change the index, so a model's queries use every core and cost no hop. A query
 * that cannot have the lock within {@link #READ_WAIT_NANOS} (a long change such as a recovery) goes to the actor's
 * queue instead, so an event loop never waits for long.
 */
final class LocalPartition implements PartitionRef {
    private static final Logger LOG = LoggerFactory.getLogger(LocalPartition.class);
    /** How long a query waits for a change to end before it queues behind it on the actor instead. */
    static final long READ_WAIT_NANOS = 200_000;

    private final PartitionKey key;
    private final int blockSize;
    private final long incarnation;
    private final VertxInternal vertx;
    private final Mailbox mailbox = new Mailbox();
    private final InFlightBatches inFlight;
    private final Promise<Void> ready = Promise.promise();
    /**
     * Not fair, and still no reader passes a writer already waiting, so steady queries cannot hold the actor's changes
     * back (the actor is the only writer).
     */
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    /** The actor's partition while it runs, for the queries that read it directly; null before and after. */
    private volatile Partition readable;

    private volatile String deploymentId;
    /** Batches sent to the actor and not taken yet, and the budget bytes they hold; guarded by this, as is stopped. */
    private int sent;

    private long sentBytes;
    private boolean stopped;

    /** The incarnation tells a partition re-created after its last worker left from the one a slow undeploy ends. */
    LocalPartition(PartitionKey key, int blockSize, long incarnation, Vertx vertx, InFlightBatches inFlight) {
        this.key = key;
        this.blockSize = blockSize;
        this.incarnation = incarnation;
        this.vertx = (VertxInternal) vertx;
        this.inFlight = inFlight;
    }

    Mailbox mailbox() {
        return mailbox;
    }

    void deployed(String id) {
        deploymentId = id;
        ready.tryComplete();
    }

    void deployFailed(Throwable t) {
        ready.tryFail(t);
        stopped();
    }

    /** The actor's deployment, once {@link #ready()} succeeded. */
    String deploymentId() {
        return deploymentId;
    }

    @Override
    public PartitionKey key() {
        return key;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public Future<Void> ready() {
        return ready.future();
    }

    @Override
    public Future<Void> openStream(StreamSpec stream) {
        return request(new PartitionCommand.OpenStream(stream)).mapEmpty();
    }

    @Override
    public Future<Void> removeStreams(long workerId, int dpRank, boolean lastOfWorker) {
        return request(new PartitionCommand.RemoveStreams(workerId, dpRank, lastOfWorker))
                .mapEmpty();
    }

    @Override
    public void applyLive(
            long workerId,
            int registeredRank,
            long generation,
            EventBatch batch,
            long heldBytes,
            Spans.BatchTrace trace) {
        boolean sent = sendCounted(
                new PartitionCommand.ApplyLive(workerId, registeredRank, generation, batch, heldBytes, trace),
                heldBytes);
        if (trace != null) {
            if (sent) {
                trace.handedOver();
            } else {
                trace.dropped("the partition had stopped");
            }
        }
    }

    /**
     * Sends a batch counted in flight until the actor takes it, or gives it back at once when the actor stopped
     * (false).
     */
    private boolean sendCounted(PartitionCommand command, long heldBytes) {
        inFlight.sent();
        synchronized (this) {
            // The actor counts it taken under this lock too, so it is counted sent first.
            if (post(command, null)) {
                sent++;
                sentBytes += heldBytes;
                return true;
            }
        }
        inFlight.taken(heldBytes);
        return false;
    }

    /** The actor runs: queries may read its partition. */
    void readable(Partition partition) {
        readable = partition;
    }

    /** Held by the actor while it changes the index: no query reads it meanwhile. */
    ReentrantReadWriteLock.WriteLock writeLock() {
        return lock.writeLock();
    }

    /**
     * A read of the partition on this thread under the read lock, or through the actor when it does not run here yet
     * or a change holds the lock past {@link #READ_WAIT_NANOS}.
     */
    private <R> Future<R> read(Function<Partition, R> read, PartitionCommand viaActor) {
        Partition p = readable;
        if (p != null && readLocked()) {
            try {
                return Future.succeededFuture(read.apply(p));
            } catch (RuntimeException e) {
                // A bug, never input, as on the actor: the asker hears of it at once.
                LOG.error("{} failed on {}", viaActor.getClass().getSimpleName(), key.dumpKey(), e);
                return Future.failedFuture(e);
            } finally {
                lock.readLock().unlock();
            }
        }
        return request(viaActor);
    }

    private boolean readLocked() {
        try {
            return lock.readLock().tryLock(READ_WAIT_NANOS, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The actor took a batch counted in flight off the bus. */
    void taken(long heldBytes) {
        synchronized (this) {
            sent--;
            sentBytes -= heldBytes;
        }
        inFlight.taken(heldBytes);
    }

    /**
     * The actor stopped: the live batches it will never take are no longer in flight, and their bytes go back to the
     * budget, so a partition removed under traffic leaks neither.
     */
    void stopped() {
        int n;
        long bytes;
        synchronized (this) {
            stopped = true;
            n = sent;
            bytes = sentBytes;
            sent = 0;
            sentBytes = 0;
        }
        for (int i = 0; i < n; i++) {
            inFlight.taken(i == 0 ? bytes : 0);
        }
        // Nothing is added once stopped is set, so this empties the mailbox for good.
        for (Mailbox.Letter l = mailbox.poll(); l != null; l = mailbox.poll()) {
            if (l.answer() != null) {
                l.answer().tryFail(new PartitionGoneException(key));
            }
        }
    }

    /** Whether the actor stopped: a turn scheduled before that finds nothing to do. */
    synchronized boolean isStopped() {
        return stopped;
    }

    @Override
    public void applyReplayed(
            long workerId, int registeredRank, long generation, long replayId, EventBatch batch, long heldBytes) {
        sendCounted(
                new PartitionCommand.ApplyReplayed(workerId, registeredRank, generation, replayId, batch, heldBytes),
                heldBytes);
    }

    @Override
    public void replayFinished(long workerId, int registeredRank, long generation, long replayId) {
        send(new PartitionCommand.ReplayFinished(workerId, registeredRank, generation, replayId));
    }

    @Override
    public Future<Void> recover(PeerSnapshot snapshot) {
        return request(new PartitionCommand.Recover(snapshot)).mapEmpty();
    }

    @Override
    public Future<RepairOutcome> repair(RepairRequest request, PeerSnapshot peer) {
        return request(new PartitionCommand.Repair(request, peer));
    }

    @Override
    public Future<Void> repairFailed(RepairRequest request) {
        return request(new PartitionCommand.RepairFailed(request)).mapEmpty();
    }

    @Override
    public Future<QueryResult> query(long[] localHashes) {
        return query(PromptHashes.LOCAL, localHashes);
    }

    @Override
    public Future<QueryResult> query(LocalHashes localHashes) {
        return read(p -> p.query(localHashes), new PartitionCommand.LazyQuery(localHashes));
    }

    @Override
    public Future<QueryResult> queryBySequenceHashes(long[] sequenceHashes) {
        return query(PromptHashes.SEQUENCE, sequenceHashes);
    }

    @Override
    public Future<QueryResult> queryByEngineHashes(long[] engineHashes) {
        return query(PromptHashes.ENGINE, engineHashes);
    }

    @Override
    public Future<QueryResult> query(PromptHashes kind, long[] hashes) {
        return read(p -> p.query(hashes, kind), new PartitionCommand.Query(hashes, kind));
    }

    @Override
    public Future<TieredQueryResult> queryTiered(long[] localHashes) {
        return read(p -> p.tieredQuery(localHashes), new PartitionCommand.TieredQuery(localHashes));
    }

    @Override
    public Future<long[]> engineHashes(long workerId, int dpRank, long[] localHashes, int maxBlocks) {
        return read(
                p -> p.engineHashes(workerId, dpRank, localHashes, maxBlocks),
                new PartitionCommand.EngineHashes(workerId, dpRank, localHashes, maxBlocks));
    }

    @Override
    public Future<StandardEventsApplied> applyStandard(List<StandardEvent> events) {
        return request(new PartitionCommand.ApplyStandard(events));
    }

    @Override
    public Future<PartitionSnapshot> snapshot(PartitionSnapshot.Order order) {
        return this.<byte[]>request(new PartitionCommand.Snapshot(order)).map(PartitionSnapshot::whole);
    }

    @Override
    public Future<byte[]> snapshotOf(long[] workerIds) {
        return request(new PartitionCommand.SnapshotOf(workerIds.clone()));
    }

    @Override
    public Future<PartitionStats> stats() {
        return request(new PartitionCommand.Stats());
    }

    private void send(PartitionCommand command) {
        post(command, null);
    }

    /**
     * Asks the actor; the answer completes on the asker's context (a new one off Vert.x threads), as an event-bus
     * reply would, so what the asker composes on it never runs on the actor.
     */
    private <R> Future<R> request(PartitionCommand command) {
        Promise<Object> answer = vertx.getOrCreateContext().promise();
        if (!post(command, answer)) {
            answer.fail(new PartitionGoneException(key));
        }
        @SuppressWarnings("unchecked")
        Future<R> typed = (Future<R>) answer.future();
        return typed;
    }

    /** Queues a command unless the actor stopped (false). */
    private boolean post(PartitionCommand command, Promise<Object> answer) {
        synchronized (this) {
            if (stopped) {
                return false;
            }
            mailbox.add(new Mailbox.Letter(command, answer));
            return true;
        }
    }

    @Override
    public String toString() {
        return "partition " + key.dumpKey() + " #" + incarnation;
    }
}
