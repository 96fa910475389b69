package dev.kvindexer.recovery;

import dev.kvindexer.config.RecoveryConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.PeerSnapshot;
import dev.kvindexer.partition.RepairOutcome;
import dev.kvindexer.partition.RepairRequest;
import dev.kvindexer.partition.StreamId;
import io.vertx.core.Future;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings back batches a stream lost for good from the first peer holding it without the hole
 * (docs/protocol/recovery.md#gap-repair-from-a-peer); on threads of its own, as asking a peer blocks.
 */
public final class GapRepair implements Consumer<RepairRequest>, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GapRepair.class);
    /** A partition answers at once; this only bounds a partition stuck behind a huge install. */
    private static final long PARTITION_WAIT_SECONDS = 60;

    private final EventCounters counters;
    private final PeerDumps dumps;
    private final Supplier<Future<List<String>>> peers;
    private final BiConsumer<StreamId, String> shown;
    private final ExecutorService executor;

    /**
     * @param authToken this node's bearer token, which peers share, or null
     * @param limits    how large and how slow one peer's answer may be, as for startup recovery
     * @param peers     the URLs of the peers to ask, in order, this node left out
     * @param shown     where each stream's outcome is shown (as its listener's last_error)
     */
    public GapRepair(
            EventCounters counters,
            String authToken,
            RecoveryConfig limits,
            Supplier<Future<List<String>>> peers,
            BiConsumer<StreamId, String> shown) {
        this.counters = counters;
        this.dumps = new PeerDumps(authToken, limits);
        this.peers = peers;
        this.shown = shown;
        AtomicInteger n = new AtomicInteger();
        this.executor = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "kvindexer-gap-repair-" + n.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public void accept(RepairRequest request) {
        try {
            executor.execute(() -> repair(request));
        } catch (RejectedExecutionException closed) {
            // The node is shutting down: the stream stays as it is.
        }
    }

    private void repair(RepairRequest r) {
        try {
            String failure = null;
            List<String> urls;
            try {
                urls = await(peers.get(), "the peer list");
            } catch (ExecutionException | TimeoutException e) {
                urls = List.of();
                failure = "the peer list: " + e.getMessage();
            }
            for (String url : urls) {
                PeerSnapshot copy;
                try {
                    copy = copyOf(url, r);
                } catch (PeerDumps.NotHeld e) {
                    LOG.debug("peer {} holds no copy of {}: {}", url, r.stream(), e.getMessage());
                    continue;
                } catch (IOException | RuntimeException e) {
                    // A URL that is no URL or an answer the parser chokes on: this peer failed, the next may do.
                    failure = url + ": " + (e.getMessage() != null ? e.getMessage() : e.toString());
                    LOG.debug("peer {} gave no copy of {}: {}", url, r.stream(), failure);
                    continue;
                }
                RepairOutcome outcome = await(r.partition().repair(r, copy), "the partition");
                if (outcome == RepairOutcome.REPAIRED) {
                    counters.gapRepair(EventCounters.GAP_REPAIR_REPAIRED);
                    String text = r.describe() + "; repaired from peer " + url;
                    shown.accept(r.stream(), text);
                    LOG.info("{} {}: the stream is exact again", text, r.stream());
                    return;
                }
                if (outcome == RepairOutcome.OUTDATED) {
                    LOG.debug("repair of {} no longer needed", r.stream());
                    return;
                }
            }
            counters.gapRepair(failure == null ? EventCounters.GAP_REPAIR_NO_PEER : EventCounters.GAP_REPAIR_FAILED);
            if (urls.isEmpty() && failure == null) {
                // A node without peers: the loss and the replay's own account of it (already shown) say it all.
                LOG.debug("no peer to repair {} from", r.stream());
                r.partition().repairFailed(r);
                return;
            }
            String text = r.describe()
                    + (failure == null ? "; no peer holds them" : "; no peer could give them (" + failure + ")")
                    + ": stream inexact";
            shown.accept(r.stream(), text);
            LOG.warn("{} {}", text, r.stream());
            r.partition().repairFailed(r);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // The partition went away (its last worker left): nothing to repair.
            LOG.debug("repair of {} abandoned: {}", r.stream(), e.toString());
            r.partition().repairFailed(r);
        }
    }

    /**
     * The peer's exact copy of the request's stream, limited to it; fails with {@link PeerDumps.NotHeld} when the peer
     * does not hold the stream past the gap without a loss of its own.
     */
    private PeerSnapshot copyOf(String url, RepairRequest r) throws IOException, InterruptedException {
        StreamId id = r.stream();
        Map<PartitionKey, SnapshotCollector.Collected> document =
                dumps.fetch(url, "?instance_id=" + Long.toUnsignedString(id.workerId()), true);
        SnapshotCollector.Collected section = document.get(id.partition());
        if (section == null || !section.exact) {
            throw new PeerDumps.NotHeld("no exact section for " + id.partition().dumpKey());
        }
        PeerSnapshot copy = section.snapshot(worker -> worker == id.workerId()).ofStream(id.workerId(), id.dpRank());
        Long seq = copy.exactWatermark(id.workerId(), id.dpRank());
        if (seq == null) {
            throw new PeerDumps.NotHeld(
                    copy.losses().isEmpty() ? "no watermark for the stream" : "it lost batches of the stream too");
        }
        if (Long.compareUnsigned(seq, r.lastLost()) < 0) {
            throw new PeerDumps.NotHeld("its watermark " + Long.toUnsignedString(seq) + " is before the gap's end");
        }
        return copy;
    }

    private static <T> T await(Future<T> future, String what)
            throws InterruptedException, ExecutionException, TimeoutException {
        try {
            return future.toCompletionStage().toCompletableFuture().get(PARTITION_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new TimeoutException(what + " did not answer within " + PARTITION_WAIT_SECONDS + " s");
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
