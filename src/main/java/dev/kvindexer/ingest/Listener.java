package dev.kvindexer.ingest;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.partition.PartitionRef;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One registration's ZMQ stream (instance, dp_rank) and its observable state. Immutable identity; the state
 * fields are written by the ingest thread that owns the socket and read by HTTP handlers.
 */
public final class Listener {
    private final long workerId;
    private final int dpRank;
    private final String endpoint;
    private final String replayEndpoint;
    private final BatchSink sink;
    private final long generation;
    private final Publisher publisher;
    private final AtomicReference<ListenerState> state = new AtomicReference<>(ListenerState.PENDING);
    private volatile String lastError;
    /** Wall-clock milliseconds of {@link #lastError}. */
    private volatile long lastErrorAtMillis;
    /** The listener connected after its last error: the error is history, not its state. */
    private volatile boolean errorPast;

    private volatile boolean held;

    public Listener(
            long workerId,
            int dpRank,
            String endpoint,
            String replayEndpoint,
            PartitionRef partition,
            long generation) {
        this(workerId, dpRank, endpoint, replayEndpoint, partition, generation, Publisher.DYNAMO);
    }

    /** A stream whose batches go to {@code partition}. */
    public Listener(
            long workerId,
            int dpRank,
            String endpoint,
            String replayEndpoint,
            PartitionRef partition,
            long generation,
            Publisher publisher) {
        this(workerId, dpRank, endpoint, replayEndpoint, new PartitionSink(partition), generation, publisher);
    }

    private Listener(
            long workerId,
            int dpRank,
            String endpoint,
            String replayEndpoint,
            BatchSink sink,
            long generation,
            Publisher publisher) {
        this.sink = sink;
        this.publisher = publisher;
        this.workerId = workerId;
        this.dpRank = dpRank;
        this.endpoint = endpoint;
        this.replayEndpoint = replayEndpoint;
        this.generation = generation;
    }

    public long workerId() {
        return workerId;
    }

    public int dpRank() {
        return dpRank;
    }

    public String endpoint() {
        return endpoint;
    }

    /** Engine ROUTER for gap replay, or null. */
    public String replayEndpoint() {
        return replayEndpoint;
    }

    /** Where the stream's batches go. */
    public BatchSink sink() {
        return sink;
    }

    public PartitionKey partitionKey() {
        return partition().key();
    }

    public int blockSize() {
        return partition().blockSize();
    }

    /** The partition a partition's stream feeds: only those are registered, so only they are asked. */
    public PartitionRef partition() {
        if (sink instanceof PartitionSink p) {
            return p.partition();
        }
        throw new IllegalStateException(this + " feeds no partition");
    }

    public long generation() {
        return generation;
    }

    public Publisher publisher() {
        return publisher;
    }

    /** A stream whose batches its own sink decodes and applies: no partition, no sequence tracking, no replay. */
    public static Listener forExternal(String endpoint, int dpRank, ExternalSink sink) {
        return new Listener(0, dpRank, endpoint, null, sink, 0, Publisher.DYNAMO);
    }

    public ListenerState state() {
        return state.get();
    }

    /** The last error recorded, current or past; null when there was none. */
    public String lastError() {
        return lastError;
    }

    /**
     * The last error while it still stands: recorded since the listener last connected. Null once a failed or
     * pending listener has connected again, as Dynamo shows {@code last_error} only while the last attempt failed.
     */
    public String currentError() {
        return errorPast ? null : lastError;
    }

    /** The last error once the listener has connected since; null otherwise. */
    public String pastError() {
        return errorPast ? lastError : null;
    }

    /** Wall-clock milliseconds of the last error, 0 when there was none. */
    public long lastErrorAtMillis() {
        return lastErrorAtMillis;
    }

    /**
     * pending → active once its publisher completed the handshake (or the endpoint is bound); failed → active when
     * the connection is made again after a failure. A paused listener stays paused.
     */
    public void markActive() {
        if (state.compareAndSet(ListenerState.PENDING, ListenerState.ACTIVE)
                || state.compareAndSet(ListenerState.FAILED, ListenerState.ACTIVE)) {
            errorPast = lastError != null;
        }
    }

    /** Held by other nodes of a sharded cluster: no socket here, nothing of it in this node's index. */
    public void markRemote() {
        state.set(ListenerState.REMOTE);
    }

    /**
     * Whether this node holds every block of the stream: a listener runs here, started at registration or after its
     * shard's history was installed. A remote one has nothing here.
     */
    public boolean serving() {
        return state.get() != ListenerState.REMOTE && !held;
    }

    /**
     * To be started held: connected and subscribed, its batches buffered until {@link ZmqIngest#release}. Its
     * partition does not have its history yet, so it serves no query meanwhile.
     */
    public void hold() {
        held = true;
    }

    boolean held() {
        return held;
    }

    void release() {
        held = false;
    }

    public void markFailed(String error) {
        recordError(error);
        state.set(ListenerState.FAILED);
    }

    /** pending/active → paused. Returns the state before; the pause happened only if that was pending or active. */
    public ListenerState pause() {
        while (true) {
            ListenerState s = state.get();
            if (!s.pausable() || state.compareAndSet(s, ListenerState.PAUSED)) {
                return s;
            }
        }
    }

    /** A new generation of this stream, pending, for a resume. */
    public Listener nextGeneration(long newGeneration) {
        return new Listener(workerId, dpRank, endpoint, replayEndpoint, sink, newGeneration, publisher);
    }

    /** Records an error that did not stop the listener (shown as last_error). */
    public void recordError(String error) {
        lastErrorAtMillis = System.currentTimeMillis();
        lastError = error;
        errorPast = false;
    }

    @Override
    public String toString() {
        String who = sink instanceof ExternalSink e ? e.name() : "instance=" + Long.toUnsignedString(workerId);
        return who + " dp_rank=" + dpRank + " endpoint=" + endpoint;
    }
}
