package dev.kvindexer.ingest;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.wire.EngineBatchDecoder;
import dev.kvindexer.wire.LiveFrames;
import dev.kvindexer.wire.MalformedBatchException;
import dev.kvindexer.zmq.zmtp.ZmtpEndpoint;
import java.util.ArrayDeque;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listener's endpoint on its {@link PollerThread} and its inbox; how its messages reach the listener's sink is its
 * kind's. Touched only by that thread.
 */
abstract class Subscription {
    private static final Logger LOG = LoggerFactory.getLogger(PollerThread.class);

    /** A whole message waiting in an inbox, with the network budget bytes it holds until it is let go. */
    record Inbound(List<byte[]> frames, long held) {}

    final Listener listener;
    final PollerThread poller;

    final ArrayDeque<Inbound> inbox = new ArrayDeque<>();
    /** Budget bytes the inbox holds. */
    long inboxBytes;

    ZmtpEndpoint endpoint;
    /** Reading held back until the inbox has room again. */
    boolean throttled;

    int loggedProblems;
    /** Connected and subscribed, but buffering (a shard hand-over installs the history first). */
    boolean held;

    boolean queued;
    boolean closed;

    Subscription(Listener listener, PollerThread poller) {
        this.listener = listener;
        this.poller = poller;
        this.held = listener.held();
    }

    /**
     * Decodes one three-frame message and hands what it holds to the sink; its {@code held} budget bytes go
     * with the batch, or back to the budget when nothing is handed on.
     */
    abstract void deliver(List<byte[]> frames, long held);

    /** Messages buffered before reading stops. */
    int readLimit(boolean gateWasOpen) {
        return held || !gateWasOpen ? PollerThread.RECEIVE_HWM : PollerThread.MAX_MESSAGES_PER_ROUND;
    }

    /**
     * Bytes buffered before reading stops: more for a listener that must wait (held, or the node recovering),
     * little for everyone once the node's budget is over half held, so waiting peers slow down before any
     * connection is refused.
     */
    long byteLimit(boolean gateWasOpen) {
        NetworkBudget budget = poller.budget;
        if (budget.tight()) {
            return PollerThread.TIGHT_INBOX_BYTES;
        }
        return held || !gateWasOpen ? budget.limit() / 4 : PollerThread.INBOX_BYTES;
    }

    /** Whether reading stops; {@code gateWasOpen}: the node had finished starting at the last look. */
    boolean full(boolean gateWasOpen) {
        return inbox.size() >= readLimit(gateWasOpen) || inboxBytes >= byteLimit(gateWasOpen);
    }

    Inbound take() {
        Inbound m = inbox.poll();
        if (m != null) {
            inboxBytes -= m.held();
        }
        return m;
    }

    /** Empties the inbox and gives its bytes back. */
    void clear() {
        inbox.clear();
        poller.budget.release(inboxBytes);
        inboxBytes = 0;
    }

    /** The subscription of {@code listener}'s kind of sink. */
    static Subscription of(Listener listener, PollerThread poller) {
        if (listener.sink() instanceof PartitionSink p) {
            return new ToPartition(listener, p, poller);
        }
        return new ToExternal(listener, (ExternalSink) listener.sink(), poller);
    }

    void skipMalformed(MalformedBatchException e) {
        poller.counters.undecodable(EventCounters.UNDECODABLE_BATCH, 1);
        problem("skipped a malformed batch: " + e.getMessage());
    }

    /** Shown on the listener; logged for its first few, then at debug. */
    void problem(String what) {
        listener.recordError(what);
        if (loggedProblems++ < PollerThread.LOGGED_PROBLEMS_PER_STREAM) {
            LOG.warn("{}: {}", listener, what);
        } else {
            LOG.debug("{}: {}", listener, what);
        }
    }

    /** A partition's stream. Its decoder is new per connection: the hybrid group filter learns per stream. */
    static final class ToPartition extends Subscription {
        final PartitionRef partition;
        final EngineBatchDecoder decoder;

        ToPartition(Listener listener, PartitionSink sink, PollerThread poller) {
            super(listener, poller);
            this.partition = sink.partition();
            this.decoder = new EngineBatchDecoder(
                    partition.blockSize(), listener.publisher().defaultLora());
        }

        @Override
        void deliver(List<byte[]> frames, long held) {
            EventBatch batch;
            try {
                batch = decoder.decode(LiveFrames.seq(frames.get(1)), frames.get(2));
            } catch (MalformedBatchException e) {
                poller.budget.release(held);
                skipMalformed(e);
                return;
            }
            partition.applyLive(
                    listener.workerId(),
                    listener.dpRank(),
                    listener.generation(),
                    batch,
                    held,
                    poller.spans.ingestBatch(
                            listener.workerId(),
                            listener.dpRank(),
                            batch.seq(),
                            batch.events().size()));
        }
    }

    /** A stream outside the partitions: its sink decodes and applies, within the in-flight bound. */
    static final class ToExternal extends Subscription {
        final ExternalSink sink;

        ToExternal(Listener listener, ExternalSink sink, PollerThread poller) {
            super(listener, poller);
            this.sink = sink;
        }

        @Override
        void deliver(List<byte[]> frames, long held) {
            ExternalSink.Refused refused;
            try {
                LiveFrames.seq(frames.get(1));
                poller.inFlight.sent();
                refused = sink.deliver(frames.get(2), () -> poller.inFlight.taken(held));
            } catch (MalformedBatchException e) {
                poller.inFlight.taken(held);
                skipMalformed(e);
                return;
            }
            if (refused.count() > 0) {
                poller.counters.undecodable(EventCounters.UNDECODABLE_EVENT, refused.count());
                problem("skipped " + refused.count() + " events: " + refused.first());
            }
        }
    }
}
