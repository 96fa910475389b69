package dev.kvindexer.node;

import dev.kvindexer.cluster.ClusterMembership;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.ListenerState;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.metrics.DataDirFigures;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.IndexerMetrics;
import dev.kvindexer.metrics.NodeMeters;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.partition.MemoryBudget;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PartitionStats;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.web.AccessLog;
import dev.kvindexer.web.Readiness;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/** The indexer's /metrics page: each partition's figures asked through its handle, then the node's own. */
final class NodeMetrics {
    private final Registry registry;
    private final ZmqIngest ingest;
    private final EventCounters counters;
    private final NodeMeters meters;
    private final ClusterMembership membership;
    private final AccessLog accessLog;
    private final MemoryBudget memory;
    private final Readiness readiness;

    private final Watermarks watermarks;
    private final Supplier<DataDirFigures> dataDir;
    private final NetworkBudget network;

    /** {@code membership} and {@code accessLog} are null when the node has none. */
    NodeMetrics(
            Registry registry,
            ZmqIngest ingest,
            EventCounters counters,
            NodeMeters meters,
            ClusterMembership membership,
            AccessLog accessLog,
            MemoryBudget memory,
            Readiness readiness,
            Watermarks watermarks,
            Supplier<DataDirFigures> dataDir,
            NetworkBudget network) {
        this.dataDir = dataDir;
        this.network = network;
        this.watermarks = watermarks;
        this.memory = memory;
        this.readiness = readiness;
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
        meters.queryQuality().retain(partitions.stream().map(PartitionRef::key).collect(Collectors.toSet()));
        return PartitionFigures.collect(partitions).map(collected -> {
            long now = System.currentTimeMillis();
            List<IndexerMetrics.PartitionFigures> found = new ArrayList<>();
            for (PartitionFigures f : collected) {
                found.add(figures(f, now));
            }
            IndexerMetrics.Snapshot snapshot = new IndexerMetrics.Snapshot(
                    partitions.size(),
                    registry.workerCount(),
                    listenersByState(),
                    found,
                    membership == null ? 1 : membership.memberCount(),
                    meters.recoverySeconds(),
                    meters.recoveredEvents(),
                    accessLog == null ? 0 : accessLog.dropped(),
                    accessLog == null ? 0 : accessLog.writeErrors(),
                    ingest.restarts(),
                    ingest.degradedReason() != null,
                    new IndexerMetrics.IndexMemoryFigures(
                            memory.limitBytes(), memory.usedBytes(), memory.evictedBlocks()),
                    ingest.listenerCapacity(),
                    readiness.notReadyReason() == null,
                    meters.recoveryExact(),
                    watermarks.inexactStreams(),
                    dataDir.get(),
                    new IndexerMetrics.NetworkFigures(
                            network.limit(), network.held(), network.peak(), network.refusals()));
            return IndexerMetrics.render(
                    snapshot,
                    meters.http(),
                    meters.grpc(),
                    counters,
                    meters.cluster(),
                    meters.queryQuality(),
                    meters.micrometerScrape());
        });
    }

    private static IndexerMetrics.PartitionFigures figures(PartitionFigures f, long nowMillis) {
        PartitionStats s = f.stats();
        List<IndexerMetrics.EngineFigures> engines = new ArrayList<>();
        for (PartitionStats.Engine e : s.engines()) {
            engines.add(new IndexerMetrics.EngineFigures(
                    Long.toUnsignedString(e.workerId()),
                    e.dpRank(),
                    e.heldPerTier(),
                    e.storedBlocks(),
                    e.removedBlocks(),
                    e.events(),
                    ageSeconds(e.lastEventMillis(), nowMillis)));
        }
        return new IndexerMetrics.PartitionFigures(
                f.partition().key().modelName(),
                f.partition().key().routingGroup(),
                s.heldPerTier(),
                s.deviceBlocks(),
                s.memoryBytes(),
                engines);
    }

    /** Seconds from {@code thenMillis} to {@code nowMillis}, never negative (the wall clock may step back). */
    static double ageSeconds(long thenMillis, long nowMillis) {
        return Math.max(0, nowMillis - thenMillis) / 1000.0;
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
