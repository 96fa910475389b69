package dev.kvindexer.metrics;

import dev.kvindexer.event.StorageTier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The indexer's {@code /metrics} page: Dynamo's families under their exact names (docs/operations.md#metrics), then our own
 * {@code kvindexer_*} families, then the JVM, process and Vert.x meters of the node's Micrometer registry.
 */
public final class IndexerMetrics {
    private IndexerMetrics() {}

    /** One partition's size figures, by tier ordinal, with the heap its index holds and its engines' figures. */
    public record PartitionFigures(
            String model,
            String routingGroup,
            long[] heldPerTier,
            long deviceBlocks,
            long memoryBytes,
            List<EngineFigures> engines) {}

    /** One engine rank of a partition: blocks held by tier ordinal, what it sent, and how long ago it last did. */
    public record EngineFigures(
            String workerId,
            int dpRank,
            long[] heldPerTier,
            long storedBlocks,
            long removedBlocks,
            long events,
            double lastEventAgeSeconds) {}

    /**
     * What the node's state looked like at scrape time.
     *
     * @param listeners       listener count by status name, every status present (zeros included)
     * @param recoverySeconds how long startup recovery took; 0 when the node recovered from no one
     * @param ingestRestarts  ingest threads replaced after a failure
     * @param ingestDegraded  an ingest thread failed and its listeners are not all open again yet
     * @param listenerCapacity the most listeners the node runs ({@code --max-listeners})
     * @param ready           {@code /ready} would answer 200
     * @param recoveryExact   startup recovery loaded exact snapshots only (stream watermarks and copy counts)
     */
    public record Snapshot(
            int models,
            int workers,
            Map<String, Integer> listeners,
            List<PartitionFigures> partitions,
            int clusterMembers,
            double recoverySeconds,
            long recoveredEvents,
            long accessLogDropped,
            long accessLogWriteErrors,
            long ingestRestarts,
            boolean ingestDegraded,
            IndexMemoryFigures memory,
            int listenerCapacity,
            boolean ready,
            boolean recoveryExact,
            long inexactStreams,
            DataDirFigures dataDir,
            NetworkFigures network) {}

    /**
     * The node's budget for bytes held on behalf of the network ({@code --max-network-memory}), what is held now,
     * the most ever held, and connections dropped or refused for it, by port.
     */
    public record NetworkFigures(long limitBytes, long heldBytes, long peakBytes, Map<String, Long> refusedByPort) {}

    /** The node's index memory budget ({@code --max-index-memory}), what the indexes hold, and blocks evicted. */
    public record IndexMemoryFigures(long budgetBytes, long usedBytes, long evictedBlocks) {}

    private static void network(PrometheusText out, NetworkFigures n) {
        out.family(
                        "kvindexer_network_memory_budget_bytes",
                        "gauge",
                        "Bytes all ports together may hold on behalf of their peers (--max-network-memory).")
                .sample("kvindexer_network_memory_budget_bytes", n.limitBytes());
        out.family(
                        "kvindexer_network_memory_held_bytes",
                        "gauge",
                        "Bytes held now on behalf of the network: messages received in part or waiting to be applied, "
                                + "frames under way, replies not yet read.")
                .sample("kvindexer_network_memory_held_bytes", n.heldBytes());
        out.family(
                        "kvindexer_network_memory_peak_bytes",
                        "gauge",
                        "The most bytes ever held at once on behalf of the network.")
                .sample("kvindexer_network_memory_peak_bytes", n.peakBytes());
        out.family(
                "kvindexer_network_refused_total",
                "counter",
                "Connections dropped or refused because the network budget could not hold what they sent, by port.");
        n.refusedByPort().forEach((port, count) -> out.sample("kvindexer_network_refused_total", count, "port", port));
    }

    private static void dataDir(PrometheusText out, DataDirFigures d) {
        out.family(
                        "kvindexer_snapshot_writes_total",
                        "counter",
                        "Snapshots of the index written to the data directory, by outcome (ok, failed).")
                .sample("kvindexer_snapshot_writes_total", d.writes(), "outcome", "ok")
                .sample("kvindexer_snapshot_writes_total", d.failedWrites(), "outcome", "failed");
        out.family(
                        "kvindexer_snapshot_last_write_timestamp_seconds",
                        "gauge",
                        "When the last snapshot was written to the data directory (Unix time; 0 before the first).")
                .sample("kvindexer_snapshot_last_write_timestamp_seconds", d.lastWriteEpochMillis() / 1000.0);
        out.family("kvindexer_snapshot_last_write_bytes", "gauge", "Size of the last snapshot written.")
                .sample("kvindexer_snapshot_last_write_bytes", d.lastWriteBytes());
        out.family("kvindexer_snapshot_last_write_seconds", "gauge", "How long writing the last snapshot took.")
                .sample("kvindexer_snapshot_last_write_seconds", d.lastWriteMillis() / 1000.0);
        out.family(
                        "kvindexer_data_dir_writable",
                        "gauge",
                        "1 when the last snapshot write succeeded (or none was due yet), 0 when it failed: the node "
                                + "serves from memory and /ready says why.")
                .sample("kvindexer_data_dir_writable", d.lastError() == null ? 1 : 0);
        out.family(
                        "kvindexer_snapshot_files_rejected_total",
                        "counter",
                        "Snapshot files moved aside at startup as truncated, corrupted, of another version or too "
                                + "large.")
                .sample("kvindexer_snapshot_files_rejected_total", d.rejectedFiles());
    }

    public static String render(
            Snapshot s,
            HttpRequestMetrics http,
            GrpcMetrics grpc,
            EventCounters events,
            ClusterCounters cluster,
            QueryQuality quality,
            String micrometer) {
        PrometheusText out = new PrometheusText();
        http.render(out);
        grpc.render(out);
        out.family("dynamo_kvindexer_models", "gauge", "Number of active model+routing-group indexers")
                .sample("dynamo_kvindexer_models", s.models());
        out.family("dynamo_kvindexer_workers", "gauge", "Number of registered worker instances")
                .sample("dynamo_kvindexer_workers", s.workers());
        out.family("dynamo_kvindexer_listeners", "gauge", "Number of ZMQ listeners by status");
        s.listeners().forEach((status, n) -> out.sample("dynamo_kvindexer_listeners", n, "status", status));
        out.family(
                        "kvindexer_listener_capacity",
                        "gauge",
                        "The most listeners the node runs (--max-listeners); a "
                                + "registration past it is refused with 429.")
                .sample("kvindexer_listener_capacity", s.listenerCapacity());
        // One snapshot for Dynamo's family and ours, so the two agree within a scrape.
        List<Applied> applied = new ArrayList<>();
        events.appliedSnapshot().forEach((k, n) -> {
            String[] typeStatus = k.split("\\|", 2);
            applied.add(new Applied(typeStatus[0], typeStatus[1], n));
        });
        out.family("dynamo_kvrouter_kv_cache_events_applied", "counter", "KV cache events applied to the index");
        applied.forEach(a -> out.sample(
                "dynamo_kvrouter_kv_cache_events_applied", a.count(), "event_type", a.type(), "status", a.status()));
        out.family("dynamo_kvrouter_kv_cache_event_warnings", "counter", "KV cache event anomalies");
        events.warningSnapshot()
                .forEach((kind, n) -> out.sample("dynamo_kvrouter_kv_cache_event_warnings", n, "warning_kind", kind));
        ours(out, s, events, applied);
        quality.render(out);
        engines(out, s.partitions());
        cluster(out, cluster);
        return out.raw(micrometer).toString();
    }

    /** Events of one type that ended with one status ({@code ok}, or why they changed nothing). */
    private record Applied(String type, String status, long count) {
        boolean ok() {
            return "ok".equals(status);
        }
    }

    private static void ours(PrometheusText out, Snapshot s, EventCounters events, List<Applied> applied) {
        eventOutcomes(out, events, applied);
        ingestFaults(out, events);
        network(out, s.network());
        ingestThreads(out, s);
        partitionSizes(out, s.partitions());
        indexMemory(out, s.memory());
        recovery(out, s);
        if (s.dataDir() != null) {
            dataDir(out, s.dataDir());
        }
        nodeState(out, s);
    }

    /** What became of the events received: applied or rejected, and the gaps, replays and repairs among them. */
    private static void eventOutcomes(PrometheusText out, EventCounters events, List<Applied> applied) {
        out.family("kvindexer_events_applied_total", "counter", "Events applied to the index, by event type.");
        applied.stream()
                .filter(Applied::ok)
                .forEach(a -> out.sample("kvindexer_events_applied_total", a.count(), "event_type", a.type()));
        out.family(
                "kvindexer_events_rejected_total", "counter", "Events that changed nothing, by event type and reason.");
        applied.stream()
                .filter(a -> !a.ok())
                .forEach(a -> out.sample(
                        "kvindexer_events_rejected_total", a.count(), "event_type", a.type(), "reason", a.status()));
        out.family(
                "kvindexer_gaps_total",
                "counter",
                "Gaps detected: in a ZMQ stream's batch seqs (source=zmq_seq) or a standardized stream's event_ids.");
        events.gapSnapshot().forEach((source, n) -> out.sample("kvindexer_gaps_total", n, "source", source));
        out.family("kvindexer_replays_total", "counter", "Replays from an engine's ROUTER, by outcome.");
        Map<String, Long> replays = events.replaySnapshot();
        for (String outcome : List.of(EventCounters.REPLAY_COMPLETE, EventCounters.REPLAY_INCOMPLETE)) {
            out.sample("kvindexer_replays_total", replays.getOrDefault(outcome, 0L), "outcome", outcome);
        }
        out.family(
                "kvindexer_gap_repairs_total",
                "counter",
                "Streams that lost batches for good and asked peers for an exact copy, by outcome: repaired from a "
                        + "peer, no peer holds them, or a peer failed and none repaired them.");
        Map<String, Long> repairs = events.gapRepairSnapshot();
        for (String outcome : List.of(
                EventCounters.GAP_REPAIR_REPAIRED, EventCounters.GAP_REPAIR_NO_PEER, EventCounters.GAP_REPAIR_FAILED)) {
            out.sample("kvindexer_gap_repairs_total", repairs.getOrDefault(outcome, 0L), "outcome", outcome);
        }
    }

    /** Engine input the node could not use as sent: restarted engines, undecodable messages, dropped connections. */
    private static void ingestFaults(PrometheusText out, EventCounters events) {
        out.family(
                        "kvindexer_engine_restarts_fenced_total",
                        "counter",
                        "Engine restarts detected by a seq going back; the engine's old blocks were dropped.")
                .sample("kvindexer_engine_restarts_fenced_total", events.warningCount(WarningKind.ENGINE_RESTART));
        out.family(
                "kvindexer_decode_errors_total",
                "counter",
                "ZMQ input that could not be decoded: messages of the wrong shape or over the size limit, and "
                        + "connections dropped for them (kind=frame), whole batches skipped (kind=batch), single events "
                        + "skipped from a batch that applied otherwise (kind=event).");
        for (String kind : List.of(
                EventCounters.UNDECODABLE_FRAME, EventCounters.UNDECODABLE_BATCH, EventCounters.UNDECODABLE_EVENT)) {
            out.sample("kvindexer_decode_errors_total", events.undecodableCount(kind), "kind", kind);
        }
        out.family(
                "kvindexer_ingest_disconnects_total",
                "counter",
                "Engine connections that ended or could not be made, by reason: unreachable, unresolvable, lost, "
                        + "protocol, too_large, stalled (a message not whole within --message-timeout), unread (a "
                        + "peer that reads no heartbeat reply), budget (--max-network-memory could not hold it).");
        events.disconnectSnapshot()
                .forEach((reason, n) -> out.sample("kvindexer_ingest_disconnects_total", n, "reason", reason));
    }

    private static void ingestThreads(PrometheusText out, Snapshot s) {
        out.family(
                        "kvindexer_ingest_restarts_total",
                        "counter",
                        "Ingest threads replaced because they or their ZMQ I/O thread died; their listeners were resubscribed.")
                .sample("kvindexer_ingest_restarts_total", s.ingestRestarts());
        out.family(
                        "kvindexer_ingest_degraded",
                        "gauge",
                        "1 while a failed ingest thread's listeners are being opened again (/ready answers 503), else 0.")
                .sample("kvindexer_ingest_degraded", s.ingestDegraded() ? 1 : 0);
    }

    private static void partitionSizes(PrometheusText out, List<PartitionFigures> partitions) {
        out.family("kvindexer_blocks", "gauge", "(block, holder) pairs held, by partition and storage tier.");
        for (PartitionFigures p : partitions) {
            for (StorageTier t : StorageTier.values()) {
                out.sample(
                        "kvindexer_blocks",
                        p.heldPerTier()[t.ordinal()],
                        "model",
                        p.model(),
                        "tenant",
                        p.routingGroup(),
                        "tier",
                        t.jsonName());
            }
        }
        out.family("kvindexer_device_tree_blocks", "gauge", "Distinct device blocks in a partition's prefix tree.");
        for (PartitionFigures p : partitions) {
            out.sample(
                    "kvindexer_device_tree_blocks", p.deviceBlocks(), "model", p.model(), "tenant", p.routingGroup());
        }
        out.family("kvindexer_partition_memory_bytes", "gauge", "Heap a partition's index holds.");
        for (PartitionFigures p : partitions) {
            out.sample(
                    "kvindexer_partition_memory_bytes",
                    p.memoryBytes(),
                    "model",
                    p.model(),
                    "tenant",
                    p.routingGroup());
        }
    }

    private static void indexMemory(PrometheusText out, IndexMemoryFigures memory) {
        out.family(
                        "kvindexer_index_memory_budget_bytes",
                        "gauge",
                        "Heap all partitions' indexes may hold together (--max-index-memory).")
                .sample("kvindexer_index_memory_budget_bytes", memory.budgetBytes());
        out.family("kvindexer_index_memory_used_bytes", "gauge", "Heap all partitions' indexes hold.")
                .sample("kvindexer_index_memory_used_bytes", memory.usedBytes());
        out.family(
                        "kvindexer_index_evicted_blocks_total",
                        "counter",
                        "Blocks evicted, least recently used first, to keep the indexes within their budget.")
                .sample("kvindexer_index_evicted_blocks_total", memory.evictedBlocks());
    }

    /** Startup recovery, and the engine streams the index holds inexactly. */
    private static void recovery(PrometheusText out, Snapshot s) {
        out.family(
                        "kvindexer_recovery_duration_seconds",
                        "gauge",
                        "How long startup recovery from a peer took; 0 when the node recovered from no one.")
                .sample("kvindexer_recovery_duration_seconds", s.recoverySeconds());
        out.family("kvindexer_recovered_events", "gauge", "Events loaded from a peer's dump at startup.")
                .sample("kvindexer_recovered_events", s.recoveredEvents());
        out.family(
                        "kvindexer_recovery_exact",
                        "gauge",
                        "1 when startup recovery loaded exact snapshots only (a kvindexer peer's blocks, copy counts "
                                + "and stream watermarks); 0 when it loaded a dump without watermarks or recovered "
                                + "from no one.")
                .sample("kvindexer_recovery_exact", s.recoveryExact() ? 1 : 0);
        out.family(
                        "kvindexer_inexact_streams",
                        "gauge",
                        "Engine streams whose blocks the index holds inexactly: batches of them were lost for good "
                                + "(no replay endpoint, or a replay that could not bring them back).")
                .sample("kvindexer_inexact_streams", s.inexactStreams());
    }

    /** Readiness, cluster size and the access log. */
    private static void nodeState(PrometheusText out, Snapshot s) {
        out.family("kvindexer_ready", "gauge", "1 when GET /ready answers 200, else 0 (recovering, gated or degraded).")
                .sample("kvindexer_ready", s.ready() ? 1 : 0);
        out.family(
                        "kvindexer_cluster_members",
                        "gauge",
                        "Members of this node's cluster, itself included (1 standalone).")
                .sample("kvindexer_cluster_members", s.clusterMembers());
        out.family(
                        "kvindexer_access_log_dropped_total",
                        "counter",
                        "Access-log lines dropped because the writer fell behind.")
                .sample("kvindexer_access_log_dropped_total", s.accessLogDropped());
        out.family(
                        "kvindexer_access_log_write_errors_total",
                        "counter",
                        "Access-log writes that failed; the file is opened again for the next line.")
                .sample("kvindexer_access_log_write_errors_total", s.accessLogWriteErrors());
    }

    /** Per engine rank: what it holds and sends, and whether it went silent. */
    private static void engines(PrometheusText out, List<PartitionFigures> partitions) {
        out.family("kvindexer_engine_blocks", "gauge", "Blocks an engine rank holds, by storage tier.");
        forEachEngine(partitions, (p, e) -> {
            for (StorageTier t : StorageTier.values()) {
                out.sample(
                        "kvindexer_engine_blocks",
                        e.heldPerTier()[t.ordinal()],
                        engineLabels(p, e, "tier", t.jsonName()));
            }
        });
        out.family(
                "kvindexer_engine_blocks_stored_total",
                "counter",
                "Blocks an engine rank's stored events added (rate() gives blocks stored per second).");
        forEachEngine(
                partitions,
                (p, e) -> out.sample("kvindexer_engine_blocks_stored_total", e.storedBlocks(), engineLabels(p, e)));
        out.family(
                "kvindexer_engine_blocks_removed_total",
                "counter",
                "Blocks an engine rank's removed events took away (rate() gives blocks removed per second).");
        forEachEngine(
                partitions,
                (p, e) -> out.sample("kvindexer_engine_blocks_removed_total", e.removedBlocks(), engineLabels(p, e)));
        out.family("kvindexer_engine_events_total", "counter", "KV events applied from an engine rank.");
        forEachEngine(
                partitions, (p, e) -> out.sample("kvindexer_engine_events_total", e.events(), engineLabels(p, e)));
        out.family(
                "kvindexer_engine_last_event_age_seconds",
                "gauge",
                "Seconds since an engine rank's last KV event; since it registered while it has sent none.");
        forEachEngine(
                partitions,
                (p, e) -> out.sample(
                        "kvindexer_engine_last_event_age_seconds", e.lastEventAgeSeconds(), engineLabels(p, e)));
    }

    private static void forEachEngine(
            List<PartitionFigures> partitions, java.util.function.BiConsumer<PartitionFigures, EngineFigures> action) {
        partitions.forEach(p -> p.engines().forEach(e -> action.accept(p, e)));
    }

    private static String[] engineLabels(PartitionFigures p, EngineFigures e, String... more) {
        String[] labels = new String[8 + more.length];
        labels[0] = "model";
        labels[1] = p.model();
        labels[2] = "tenant";
        labels[3] = p.routingGroup();
        labels[4] = "worker_id";
        labels[5] = e.workerId();
        labels[6] = "dp_rank";
        labels[7] = Integer.toString(e.dpRank());
        System.arraycopy(more, 0, labels, 8, more.length);
        return labels;
    }

    private static void cluster(PrometheusText out, ClusterCounters cluster) {
        out.family(
                "kvindexer_cluster_values_rejected_total",
                "counter",
                "Values from cluster maps or the event bus that were ignored: source (registrations, tombstones, members, "
                        + "announcements, shard_queries, reservations, reservation_pushes, session_bindings, "
                        + "session_binding_pushes, grpc_changes, grpc_states) and reason (invalid, unsigned, "
                        + "bad_signature).");
        cluster.rejectedSnapshot().forEach((k, n) -> {
            String[] sourceReason = k.split("\\|", 2);
            out.sample(
                    "kvindexer_cluster_values_rejected_total", n, "source", sourceReason[0], "reason", sourceReason[1]);
        });
        out.family(
                "kvindexer_cluster_connections_refused_total",
                "counter",
                "Connections to a cluster port closed for what they sent: port (bus, member) and reason (frame_size, "
                        + "busy, tls_handshake, packet_size, no_handshake, invalid_packet).");
        cluster.refusedConnectionSnapshot().forEach((k, n) -> {
            String[] portReason = k.split("\\|", 2);
            out.sample(
                    "kvindexer_cluster_connections_refused_total", n, "port", portReason[0], "reason", portReason[1]);
        });
        out.family(
                "kvindexer_cluster_repairs_total",
                "counter",
                "Differences a full reconcile with the cluster map found and repaired, by action.");
        cluster.repairSnapshot()
                .forEach((action, n) -> out.sample("kvindexer_cluster_repairs_total", n, "action", action));
        out.family(
                        "kvindexer_cluster_reconciles_total",
                        "counter",
                        "Full reconciles of this node's registrations with the cluster map (join, membership change, period).")
                .sample("kvindexer_cluster_reconciles_total", cluster.reconcileCount());
        out.family(
                        "kvindexer_shard_scattered_queries_total",
                        "counter",
                        "Queries of a sharded partition that asked other nodes for the instances this node does not hold.")
                .sample("kvindexer_shard_scattered_queries_total", cluster.scatteredCount());
        out.family(
                        "kvindexer_shard_retries_total",
                        "counter",
                        "Shard holders that failed, timed out or lacked an instance, whose instances went to the next holder.")
                .sample("kvindexer_shard_retries_total", cluster.shardRetryCount());
        out.family(
                        "kvindexer_shard_rebuilds_total",
                        "counter",
                        "Instances that no live node served any more (every "
                                + "holder of their shard was lost), subscribed here again and rebuilt from their engine's replay.")
                .sample("kvindexer_shard_rebuilds_total", cluster.shardRebuildCount());
        out.family(
                        "kvindexer_shard_missing_instances_total",
                        "counter",
                        "Instances that no live node could answer for; each such answer carries x-kvindexer-missing-instances.")
                .sample("kvindexer_shard_missing_instances_total", cluster.missingInstanceCount());
    }
}
