package dev.kvindexer.ingest;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.WarningKind;
import dev.kvindexer.partition.PartitionBus;
import dev.kvindexer.partition.PartitionMessages;
import dev.kvindexer.partition.ReplayRequest;
import dev.kvindexer.wire.EngineBatchDecoder;
import dev.kvindexer.wire.LiveFrames;
import dev.kvindexer.wire.MalformedBatchException;
import io.vertx.core.eventbus.EventBus;
import java.util.List;
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
 * Fetches a stream's missed batches from its engine's replay ROUTER over a DEALER (SPEC §3.5) and hands them
 * to the partition in order, followed by a ReplayFinished. Runs on its own threads, because a replay blocks
 * for up to its timeout and must not stall live ingest.
 */
public final class ReplayClient implements Consumer<ReplayRequest>, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplayClient.class);
    /** [UNDEF] in the reference; the SPEC recommends giving up after 2 s without a message. */
    static final int RECEIVE_TIMEOUT_MILLIS = 2000;

    private final ZContext ctx;
    private final EventBus bus;
    private final EventCounters counters;
    private final ListenerDirectory listeners;
    private final ExecutorService executor;

    /** Finds the current listener of a stream, to show a failed replay as its last_error. */
    @FunctionalInterface
    public interface ListenerDirectory {
        Listener find(long workerId, int dpRank);
    }

    public ReplayClient(ZContext ctx, EventBus bus, EventCounters counters, ListenerDirectory listeners, int threads) {
        this.ctx = ctx;
        this.bus = bus;
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
        ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
        try {
            ZmqSockets.applyCommon(dealer, r.replayEndpoint());
            dealer.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
            dealer.connect(r.replayEndpoint());
            dealer.sendMore(new byte[0]);
            dealer.send(LiveFrames.seqFrame(r.start()));
            EngineBatchDecoder decoder = new EngineBatchDecoder(r.blockSize(), r.defaultLora());
            while (true) {
                List<byte[]> frames = ZmqSockets.receiveMessage(dealer, 0);
                if (frames == null) {
                    outcome.timedOut();
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
                    outcome.received(seq);
                    EventBatch batch = decoder.decode(seq, payload);
                    PartitionBus.send(bus, r.partitionAddress(), new PartitionMessages.ReplayedBatch(r.stream().workerId(),
                            r.stream().dpRank(), r.generation(), r.replayId(), batch));
                } catch (MalformedBatchException e) {
                    counters.warning(WarningKind.DECODE_ERROR, 1);
                    LOG.warn("replayed batch skipped {}: {}", r.stream(), e.getMessage());
                }
            }
        } catch (RuntimeException e) {
            outcome.failed(e.toString());
        } finally {
            ctx.destroySocket(dealer);
            PartitionBus.send(bus, r.partitionAddress(), new PartitionMessages.ReplayFinished(r.stream().workerId(),
                    r.stream().dpRank(), r.generation(), r.replayId()));
        }
        String reason = outcome.incompleteReason();
        if (reason != null) {
            counters.warning(WarningKind.REPLAY_INCOMPLETE, 1);
            counters.replay(EventCounters.REPLAY_INCOMPLETE);
            String text = "Replay incomplete: requested=[" + Long.toUnsignedString(r.start()) + ", "
                    + Long.toUnsignedString(r.end()) + ") " + outcome.describeReceived() + " reason=" + reason;
            LOG.warn("{} {}", text, r.stream());
            Listener l = listeners.find(r.stream().workerId(), r.stream().dpRank());
            if (l != null) {
                l.recordError(text);
            }
        } else {
            counters.replay(EventCounters.REPLAY_COMPLETE);
            LOG.info("replay complete {} {}", r.stream(), outcome.describeReceived());
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
