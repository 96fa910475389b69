package dev.kvindexer.ingest;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.LogThrottle;
import dev.kvindexer.metrics.WarningKind;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.partition.InFlightBatches;
import dev.kvindexer.partition.ReplayRequest;
import dev.kvindexer.partition.StreamId;
import dev.kvindexer.wire.EngineBatchDecoder;
import dev.kvindexer.wire.LiveFrames;
import dev.kvindexer.wire.MalformedBatchException;
import dev.kvindexer.zmq.zmtp.ZmtpConfig;
import dev.kvindexer.zmq.zmtp.ZmtpDealer;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fetches a stream's missed batches from its engine's replay ROUTER over a DEALER
 * (docs/protocol/zmq.md#replay-protocol) and hands them
 * to the partition in order, followed by a ReplayFinished. Runs on its own threads, because a replay blocks
 * for up to its timeout and must not stall live ingest. Each replay is one connection of its own ({@link ZmtpDealer}),
 * holding what it reads under the live subscriber's bounds and the node's network budget, so a replay peer that
 * breaks one touches neither live ingest nor another replay; replayed batches count in flight as live ones do, so a
 * peer that replays faster than the partition applies waits for it.
 */
public final class ReplayClient implements Consumer<ReplayRequest>, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplayClient.class);
    /** [UNDEF] in the reference; we give up after 2 s without a message. */
    static final int RECEIVE_TIMEOUT_MILLIS = 2000;
    /** A peer that keeps streaming without ever reaching the requested end is cut off after this long. */
    static final long MAX_REPLAY_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(60);

    private final ZmtpConfig settings;
    private final NetworkBudget budget;
    private final InFlightBatches inFlight;
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
        this(
                counters,
                listeners,
                threads,
                ZmtpConfig.defaults(maxEventBytes),
                NetworkBudget.unbounded(),
                new InFlightBatches(Integer.MAX_VALUE));
    }

    /**
     * @param settings  limits and timeouts of each replay's connection
     * @param budget    what each replay's messages are reserved from until their partition takes them
     * @param inFlight  the bound replayed batches share with live ones
     */
    public ReplayClient(
            EventCounters counters,
            ListenerDirectory listeners,
            int threads,
            ZmtpConfig settings,
            NetworkBudget budget,
            InFlightBatches inFlight) {
        this.settings = settings;
        this.budget = budget;
        this.inFlight = inFlight;
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
        long deadline = System.nanoTime() + MAX_REPLAY_NANOS;
        try (ZmtpDealer dealer = ZmtpDealer.connect(r.replayEndpoint(), settings, budget)) {
            dealer.send(new byte[0], LiveFrames.seqFrame(r.start()));
            new ReplyReader(r, dealer, outcome, deadline).readAll();
        } catch (IOException | RuntimeException e) {
            outcome.failed(e.getMessage() != null ? e.getMessage() : e.toString());
        } finally {
            try {
                report(r, outcome);
            } finally {
                // After the report: what the partition does once the replay ended (a repair from a peer) shows later.
                r.partition().replayFinished(r.stream().workerId(), r.stream().dpRank(), r.generation(), r.replayId());
            }
        }
    }

    /** Reads one replay's replies off its connection and hands their batches to the partition, in order. */
    private final class ReplyReader {
        private final ReplayRequest r;
        private final ZmtpDealer dealer;
        private final ReplayOutcome outcome;
        private final long deadline;
        private final EngineBatchDecoder decoder;

        ReplyReader(ReplayRequest r, ZmtpDealer dealer, ReplayOutcome outcome, long deadline) {
            this.r = r;
            this.dealer = dealer;
            this.outcome = outcome;
            this.deadline = deadline;
            this.decoder = new EngineBatchDecoder(r.blockSize(), r.defaultLora());
        }

        /** Until the requested range is through, the peer ends or goes quiet, or the replay's time is up. */
        void readAll() throws IOException {
            while (true) {
                ZmtpDealer.Message m = dealer.receive(Duration.ofMillis(RECEIVE_TIMEOUT_MILLIS));
                if (m == null) {
                    outcome.timedOut();
                    return;
                }
                List<byte[]> frames = m.frames();
                if (System.nanoTime() - deadline > 0) {
                    dealer.release(m);
                    outcome.failed("still streaming after " + MAX_REPLAY_NANOS / 1_000_000_000 + " s");
                    return;
                }
                // Both reply styles end with [seq, payload]; the frames before are the delimiter and maybe a topic.
                byte[] payload = frames.size() < 3 ? null : frames.get(frames.size() - 1);
                if (payload == null || payload.length == 0) {
                    dealer.release(m);
                    if (payload == null) {
                        continue;
                    }
                    return;
                }
                if (!handOn(m, payload)) {
                    return;
                }
            }
        }

        /** Hands one reply's batch to the partition if it is in the range asked; false when it ends the replay. */
        private boolean handOn(ZmtpDealer.Message m, byte[] payload) {
            List<byte[]> frames = m.frames();
            boolean handed = false;
            try {
                long seq = LiveFrames.seq(frames.get(frames.size() - 2));
                if (Long.compareUnsigned(seq, r.start()) < 0 || Long.compareUnsigned(seq, r.end()) >= 0) {
                    // Not what was asked: applying it would move the watermark past batches never seen.
                    counters.warning(WarningKind.REPLAY_OUT_OF_RANGE, 1);
                    outcome.outOfRange(seq);
                    return Long.compareUnsigned(seq, r.end()) < 0;
                }
                outcome.received(seq);
                EventBatch batch = decoder.decode(seq, payload);
                if (!awaitRoom(deadline)) {
                    outcome.failed("the partitions took no batch for " + MAX_REPLAY_NANOS / 1_000_000_000 + " s");
                    return false;
                }
                handed = true;
                r.partition()
                        .applyReplayed(
                                r.stream().workerId(),
                                r.stream().dpRank(),
                                r.generation(),
                                r.replayId(),
                                batch,
                                m.held());
                // The rest of the tail is what live ingest holds from r.end() on.
                return Long.compareUnsigned(seq, r.end() - 1) < 0;
            } catch (MalformedBatchException e) {
                counters.undecodable(EventCounters.UNDECODABLE_BATCH, 1);
                LOG.warn("replayed batch skipped {}: {}", r.stream(), e.getMessage());
                return true;
            } finally {
                if (!handed) {
                    dealer.release(m);
                }
            }
        }
    }

    /** Waits while the partitions have as many batches in flight as they may; false once {@code deadline} passed. */
    private boolean awaitRoom(long deadline) {
        while (!inFlight.hasRoom()) {
            if (System.nanoTime() - deadline > 0 || Thread.currentThread().isInterrupted()) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        return true;
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
