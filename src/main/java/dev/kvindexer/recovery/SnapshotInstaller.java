package dev.kvindexer.recovery;

import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.partition.PeerSnapshot;
import dev.kvindexer.registry.LocalRegistrar;
import io.vertx.core.Future;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Installs a collected dump or snapshot into this node's partitions, one partition at a time, leaving out workers not
 * registered here: what a peer sent at startup and what the data directory held go in the same way. Blocking.
 */
final class SnapshotInstaller {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotInstaller.class);

    private final LocalRegistrar registrations;
    private final Integer fallbackBlockSize;
    private final BiPredicate<PartitionKey, Long> registered;
    private final boolean replayAtInstall;

    /**
     * @param fallbackBlockSize block size for partitions of the oldest dump shape (no block_size), or null to skip them
     * @param registered        whether a worker is registered in a partition here, or null to load every worker
     * @param replayAtInstall   ask every stream's engine at once for what it published after the watermark (an old
     *                          snapshot, such as the data directory's)
     */
    SnapshotInstaller(
            LocalRegistrar registrations,
            Integer fallbackBlockSize,
            BiPredicate<PartitionKey, Long> registered,
            boolean replayAtInstall) {
        this.registrations = registrations;
        this.fallbackBlockSize = fallbackBlockSize;
        this.registered = registered;
        this.replayAtInstall = replayAtInstall;
    }

    /**
     * Installs every partition of what {@code source} gave; reports them, the blocks placed and whether every one was
     * an exact snapshot, timed from {@code startedNanos}.
     */
    RecoveryReport installAll(
            String source, Map<PartitionKey, SnapshotCollector.Collected> partitions, long startedNanos)
            throws InterruptedException {
        long blocks = 0;
        boolean exact = true;
        for (Map.Entry<PartitionKey, SnapshotCollector.Collected> e : partitions.entrySet()) {
            blocks += install(e.getKey(), e.getValue());
            exact &= e.getValue().exact;
        }
        return new RecoveryReport(
                source, partitions.size(), blocks, exact, (System.nanoTime() - startedNanos) / 1_000_000);
    }

    /** Installs one partition; returns the blocks it placed, 0 when it was skipped (logged). */
    long install(PartitionKey key, SnapshotCollector.Collected c) throws InterruptedException {
        int blockSize = c.blockSize > 0 ? c.blockSize : fallbackBlockSize == null ? 0 : fallbackBlockSize;
        if (blockSize <= 0) {
            LOG.warn(
                    "skipped recovered partition {}: the dump has no block_size and --block-size is not set",
                    key.dumpKey());
            return 0;
        }
        PeerSnapshot collected = c.snapshot(worker -> registered == null || registered.test(key, worker));
        PeerSnapshot snapshot = replayAtInstall ? collected.replayingAtInstall() : collected;
        int leftOut = c.events.size() + c.extraCopies.size() - snapshot.events().size();
        if (leftOut > 0) {
            LOG.warn("left out {} recovered events of {} from workers not registered here", leftOut, key.dumpKey());
        }
        try {
            Future<Void> applied = registrations.ensurePartition(key, blockSize).compose(p -> p.recover(snapshot));
            applied.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
            long blocks = 0;
            for (PeerSnapshot.Event e : snapshot.events()) {
                blocks += blocks(e.event());
            }
            return blocks;
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn(
                    "skipped recovered partition {}: {}",
                    key.dumpKey(),
                    e.getCause() != null ? e.getCause().getMessage() : e.toString());
            return 0;
        }
    }

    /** Blocks an event places: a JSON dump has one per event, a snapshot a whole chain. */
    private static int blocks(KvEvent event) {
        if (event instanceof KvEvent.Stored s) {
            return s.blockHashes().length;
        }
        if (event instanceof KvEvent.StoredBySequence s) {
            return s.sequenceHashes().length;
        }
        return 1;
    }
}
