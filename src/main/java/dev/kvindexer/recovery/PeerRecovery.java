package dev.kvindexer.recovery;

import dev.kvindexer.config.RecoveryConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.registry.LocalRegistrar;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Startup recovery (docs/protocol/recovery.md#recovery-algorithm): GET /dump from the first reachable peer and load it
 * into the partitions. A Dynamo
 * peer's JSON dump is loaded the Dynamo way; a kvindexer peer answers with its binary snapshot (SnapshotFormat),
 * which carries watermarks and reference counts and is installed exactly (docs/protocol/recovery.md#recovery-algorithm). A peer's dump is parsed completely before anything is applied, so a
 * peer that fails half-way leaves nothing behind for the next one to duplicate. Blocking; runs on the starting thread.
 */
public final class PeerRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(PeerRecovery.class);

    private final SnapshotInstaller installer;
    private final PeerDumps dumps;

    /**
     * @param fallbackBlockSize block size for partitions of the oldest dump shape (no block_size), or null to skip them
     * @param authToken         this node's bearer token, sent to peers (a cluster shares one), or null
     * @param registered        whether a worker is registered in a partition here: the blocks and watermarks of any
     *                          other worker are left out (a clustered node, whose registrations are the cluster's and
     *                          applied before recovery: a peer's orphans must not become blocks no one removes); null
     *                          loads every worker, as Dynamo's recovery does
     * @param limits            how large and how slow one peer's answer may be
     */
    public PeerRecovery(
            LocalRegistrar registrations,
            Integer fallbackBlockSize,
            String authToken,
            BiPredicate<PartitionKey, Long> registered,
            RecoveryConfig limits) {
        this.installer = new SnapshotInstaller(registrations, fallbackBlockSize, registered, false);
        this.dumps = new PeerDumps(authToken, limits);
    }

    /** Recovers from the first peer that answers with a parsable dump; reports which peer and what it loaded. */
    public RecoveryReport recover(List<String> peers) throws InterruptedException {
        long started = System.nanoTime();
        for (String url : peers) {
            Map<PartitionKey, SnapshotCollector.Collected> dump;
            try {
                dump = dumps.fetch(url, "", false);
            } catch (IOException e) {
                LOG.warn(
                        "peer {} gave no usable dump: {}", url, e.getMessage() != null ? e.getMessage() : e.toString());
                continue;
            }
            RecoveryReport report = installer.installAll(url, dump, started);
            LOG.info(
                    "recovered {} partitions and {} events from peer {} ({}, {} ms)",
                    report.partitions(),
                    report.events(),
                    url,
                    report.exact() ? "exact snapshot" : "Dynamo dump",
                    report.millis());
            return report;
        }
        LOG.warn("no peer reachable for recovery; starting with an empty index");
        return RecoveryReport.NONE;
    }
}
