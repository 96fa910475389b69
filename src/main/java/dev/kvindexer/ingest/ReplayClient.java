package dev.kvindexer.ingest;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.LogThrottle;
import dev.kvindexer.metrics.WarningKind;
import dev.kvindexer.partition.ReplayRequest;
import dev.kvindexer.partition.StreamId;
import dev.kvindexer.wire.EngineBatchDecoder;
import dev.kvindexer.wire.LiveFrames;
import dev.kvindexer.wire.MalformedBatchException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Fetches a stream's missed batches from its engine's replay ROUTER over a DEALER
 * (docs/protocol/zmq.md#replay-protocol) and hands them
 * to the partition in order, followed by a ReplayFinished. Runs on its own threads, because a replay blocks
 * for up to its timeout and must not stall live ingest. Each replay has a JeroMQ context of its own, so a replay
 * peer that breaks one cannot touch live ingest or another replay.
 */
public final class ReplayClient implements Consumer<ReplayRequest>, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplayClient.class);
    /** [UNDEF] in the reference; we give up after 2 s without a message. */
    static final int RECEIVE_TIMEOUT_MILLIS = 2000;
    /** A peer that keeps streaming without ever reaching the requested end is cut off after this long. */
    static final long MAX_REPLAY_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(60);

    private static final java.time.Duration CLOSE_WAIT = java.time.Duration.ofSeconds(1);

    private final long maxEventBytes;
    private final EventCounters counters;
    private final ListenerDirectory listeners;
    private final ExecutorService executor;
    /** One throttle per stream: a stream with a gap every batch would otherwise log a line per replay. */
    private final Map<StreamId, LogThrottle> logs = new ConcurrentHashMap<>();

    /** Finds the current listener of a stream, to show a failed replay as its last_error. */
    @FunctionalInterface
    public interface ListenerDirectory {
        Listener find(long workerId, int dpRank);
    }

    public ReplayClient(EventCounters counters, ListenerDirectory listeners, int threads, long maxEventBytes) {
        this.maxEventBytes = maxEventBytes;
        this.counters = counters;
        this.listeners = listeners;
        AtomicInteger n = new AtomicInteger();
        this.executor = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "kvindexer-replay-" + n.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public void accept(ReplayRequest request) {
        executor.execute(() -> replay(request));
    }

    private void replay(ReplayRequest r) {
        ReplayOutcome outcome = new ReplayOutcome(r.start(), r.end());
        String[] ioFailure = {null};
        ZContext ctx = ZmqContexts.create((t, e) -> ioFailure[0] = e.toString());
        long deadline = System.nanoTime() + MAX_REPLAY_NANOS;
        try {
            ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
            ZmqSockets.applyCommon(dealer, r.replayEndpoint(), maxEventBytes);
            dealer.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
            dealer.connect(r.replayEndpoint());
            dealer.sendMore(new byte[0]);
            dealer.send(LiveFrames.seqFrame(r.start()));
            EngineBatchDecoder decoder = new EngineBatchDecoder(r.blockSize(), r.defaultLora());
            while (true) {
                List<byte[]> frames = ZmqSockets.receiveMessage(dealer, 0);
                if (frames == null) {
                    if (ioFailure[0] != null) {
                        outcome.failed("ZMQ I/O thread died: " + ioFailure[0]);
                    } else {
                        outcome.timedOut();
                    }
                    break;
                }
                if (System.nanoTime() - deadline > 0) {
                    outcome.failed("still streaming after " + MAX_REPLAY_NANOS / 1_000_000_000 + " s");
                    break;
                }
                if (frames.size() < 3) {
                    continue;
                }
                // Both reply styles end with [seq, payload]; the frames before are the delimiter and maybe a topic.
                byte[] payload = frames.get(frames.size() - 1);
                if (payload.length == 0) {
                    break;
                }
                try {
                    long seq = LiveFrames.seq(frames.get(frames.size() - 2));
                    if (Long.compareUnsigned(seq, r.start()) < 0 || Long.compareUnsigned(seq, r.end()) >= 0) {
                        // Not what was asked: applying it would move the watermark past batches never seen.
                        counters.warning(WarningKind.REPLAY_OUT_OF_RANGE, 1);
                        outcome.outOfRange(seq);
                        if (Long.compareUnsigned(seq, r.end()) >= 0) {
                            break;
                        }
                        continue;
                    }
                    outcome.received(seq);
                    EventBatch batch = decoder.decode(seq, payload);
                    r.partition()
                            .applyReplayed(
                                    r.stream().workerId(), r.stream().dpRank(), r.generation(), r.replayId(), batch);
                    if (Long.compareUnsigned(seq, r.end() - 1) >= 0) {
                        // The rest of the tail is what live ingest holds from r.end() on.
                        break;
                    }
                } catch (MalformedBatchException e) {
                    counters.undecodable(EventCounters.UNDECODABLE_BATCH, 1);
                    LOG.warn("replayed batch skipped {}: {}", r.stream(), e.getMessage());
                }
            }
        } catch (RuntimeException e) {
            outcome.failed(e.toString());
        } finally {
            ZmqContexts.closeWithin(ctx, CLOSE_WAIT, "replay");
            try {
                report(r, outcome);
            } finally {
                // After the report: what the partition does once the replay ended (a repair from a peer) shows later.
                r.partition().replayFinished(r.stream().workerId(), r.stream().dpRank(), r.generation(), r.replayId());
            }
        }
    }

    /** Counts, logs and shows (as the listener's last_error) how the replay ended. */
    private void report(ReplayRequest r, ReplayOutcome outcome) {
        String reason = outcome.incompleteReason();
        LogThrottle throttle = logs.computeIfAbsent(r.stream(), s -> new LogThrottle());
        if (reason != null) {
            counters.warning(WarningKind.REPLAY_INCOMPLETE, 1);
            counters.replay(EventCounters.REPLAY_INCOMPLETE);
            String text = "Replay incomplete: requested=[" + Long.toUnsignedString(r.start()) + ", "
                    + Long.toUnsignedString(r.end()) + ") " + outcome.describeReceived() + " reason=" + reason;
            synchronized (throttle) {
                if (throttle.admit()) {
                    LOG.warn("{} {}{}", text, r.stream(), throttle.heldBackNote());
                }
            }
            Listener l = listeners.find(r.stream().workerId(), r.stream().dpRank());
            if (l != null) {
                l.recordError(text);
            }
        } else {
            counters.replay(EventCounters.REPLAY_COMPLETE);
            synchronized (throttle) {
                if (throttle.admit()) {
                    LOG.info(
                            "replay complete {} {}{}", r.stream(), outcome.describeReceived(), throttle.heldBackNote());
                }
            }
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
