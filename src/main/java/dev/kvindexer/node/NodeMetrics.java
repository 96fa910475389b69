package dev.kvindexer.node;

import dev.kvindexer.cluster.ClusterMembership;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.ListenerState;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.IndexerMetrics;
import dev.kvindexer.metrics.NodeMeters;
import dev.kvindexer.partition.MemoryBudget;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.web.AccessLog;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The indexer's /metrics page: each partition's figures asked through its handle, then the node's own. */
final class NodeMetrics {
    private final Registry registry;
    private final ZmqIngest ingest;
    private final EventCounters counters;
    private final NodeMeters meters;
    private final ClusterMembership membership;
    private final AccessLog accessLog;
    private final MemoryBudget memory;

    /** {@code membership} and {@code accessLog} are null when the node has none. */
    NodeMetrics(Registry registry, ZmqIngest ingest, EventCounters counters, NodeMeters meters,
                ClusterMembership membership, AccessLog accessLog, MemoryBudget memory) {
        this.memory = memory;
        this.registry = registry;
        this.ingest = ingest;
        this.counters = counters;
        this.meters = meters;
        this.membership = membership;
        this.accessLog = accessLog;
    }

    /** The page in Prometheus text. */
    Future<String> render() {
        List<PartitionRef> partitions = registry.partitions();
        List<Future<IndexerMetrics.PartitionFigures>> figures = new ArrayList<>();
        for (PartitionRef p : partitions) {
            figures.add(p.stats().map(s -> new IndexerMetrics.PartitionFigures(p.key().modelName(),
                    p.key().tenantId(), s.heldPerTier(), s.deviceBlocks())));
        }
        // A partition that is going away as we ask is left out rather than failing the scrape.
        return Future.join(figures).transform(ignored -> {
            List<IndexerMetrics.PartitionFigures> found = new ArrayList<>();
            for (Future<IndexerMetrics.PartitionFigures> f : figures) {
                if (f.succeeded()) {
                    found.add(f.result());
                }
            }
            IndexerMetrics.Snapshot snapshot = new IndexerMetrics.Snapshot(partitions.size(),
                    registry.workerCount(), listenersByState(), found,
                    membership == null ? 1 : membership.memberCount(),
                    meters.recoverySeconds(), meters.recoveredEvents(),
                    accessLog == null ? 0 : accessLog.dropped(),
                    accessLog == null ? 0 : accessLog.writeErrors(),
                    ingest.restarts(), ingest.degradedReason() != null,
                    new IndexerMetrics.IndexMemoryFigures(memory.limitBytes(), memory.usedBytes(),
                            memory.evictedBlocks()));
            return Future.succeededFuture(IndexerMetrics.render(snapshot, meters.http(), counters, meters.cluster(),
                    meters.micrometerScrape()));
        });
    }

    private Map<String, Integer> listenersByState() {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (ListenerState s : ListenerState.values()) {
            out.put(s.jsonName(), 0);
        }
        for (Listener l : registry.listeners()) {
            out.merge(l.state().jsonName(), 1, Integer::sum);
        }
        return out;
    }
}
