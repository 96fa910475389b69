package dev.kvindexer.node;

import dev.kvindexer.cluster.ClusterMembership;
import dev.kvindexer.cluster.ShardPlacement;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.ListenerState;
import dev.kvindexer.metrics.DataDirFigures;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.HttpRequestMetrics;
import dev.kvindexer.metrics.NodeMeters;
import dev.kvindexer.metrics.QueryQuality;
import dev.kvindexer.partition.MemoryBudget;
import dev.kvindexer.partition.PartitionStats;
import dev.kvindexer.partition.StreamId;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.recovery.RecoveryReport;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.web.Readiness;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * GET /overview: the node in one JSON document for the dashboard: readiness, cluster, memory, request and event
 * totals, partitions, and every worker rank with its listener and what it holds and sends. Instance ids are strings:
 * a browser's numbers cannot hold every u64.
 */
final class NodeOverview {
    /** The endpoints whose totals the dashboard charts as queries. */
    static final List<String> QUERY_ENDPOINTS = List.of("/query", "/query_by_hash", "/query_tiered_by_hash");

    private final Watermarks watermarks;
    private final Supplier<DataDirFigures> dataDir;
    private final Registry registry;
    private final Readiness readiness;
    private final EventCounters counters;
    private final NodeMeters meters;
    private final MemoryBudget memory;
    private final ClusterMembership membership;
    private final ShardPlacement placement;
    private final Supplier<RecoveryReport> recovery;
    private final Supplier<Future<JsonObject>> selection;
    private final long startedMillis = System.currentTimeMillis();

    /** {@code membership} and {@code placement} are null on a node without a cluster or without shards. */
    NodeOverview(
            Registry registry,
            Readiness readiness,
            EventCounters counters,
            NodeMeters meters,
            MemoryBudget memory,
            ClusterMembership membership,
            ShardPlacement placement,
            Supplier<RecoveryReport> recovery,
            Watermarks watermarks,
            Supplier<DataDirFigures> dataDir,
            Supplier<Future<JsonObject>> selection) {
        this.selection = selection;
        this.dataDir = dataDir;
        this.watermarks = watermarks;
        this.registry = registry;
        this.readiness = readiness;
        this.counters = counters;
        this.meters = meters;
        this.memory = memory;
        this.membership = membership;
        this.placement = placement;
        this.recovery = recovery;
    }

    Future<String> render() {
        Future<List<ClusterMembership.Member>> members = membership == null
                ? Future.succeededFuture(List.of())
                : membership.members().otherwise(List.of());
        List<Registry.WorkerView> workers = registry.workers(null, null);
        // A selection service that cannot answer leaves its panel out rather than the page.
        Future<JsonObject> selected = selection.get().otherwise((JsonObject) null);
        return PartitionFigures.collect(registry.partitions())
                .compose(figures -> members.compose(m -> selected.map(select -> {
                    long now = System.currentTimeMillis();
                    return new JsonObject()
                            .put("node", node(now))
                            .put("cluster", cluster(m))
                            .put(
                                    "memory",
                                    new JsonObject()
                                            .put("budget_bytes", memory.limitBytes())
                                            .put("used_bytes", memory.usedBytes())
                                            .put("evicted_blocks", memory.evictedBlocks()))
                            .put("data_dir", dataDir())
                            .put("totals", totals())
                            .put("partitions", partitions(figures))
                            .put("workers", workers(workers, figures, now))
                            .put("selection", select)
                            .encode();
                })));
    }

    /** The data directory's state, or null when the node keeps its index in memory only. */
    private JsonObject dataDir() {
        DataDirFigures d = dataDir.get();
        if (d == null) {
            return null;
        }
        return new JsonObject()
                .put("dir", d.dir())
                .put("writes", d.writes())
                .put("failed_writes", d.failedWrites())
                .put("last_write_millis", d.lastWriteEpochMillis() == 0 ? null : d.lastWriteEpochMillis())
                .put("last_write_bytes", d.lastWriteBytes())
                .put("last_write_seconds", d.lastWriteMillis() / 1000.0)
                .put("last_error", d.lastError())
                .put("rejected_files", d.rejectedFiles());
    }

    private JsonObject node(long now) {
        String reason = readiness.notReadyReason();
        return new JsonObject()
                .put("ready", reason == null)
                .put("not_ready_reason", reason)
                .put("node_id", membership == null ? null : membership.nodeId())
                .put("uptime_seconds", NodeMetrics.ageSeconds(startedMillis, now))
                .put("now_millis", now);
    }

    private JsonObject cluster(List<ClusterMembership.Member> members) {
        JsonArray list = new JsonArray();
        members.forEach(m -> list.add(new JsonObject()
                .put("node_id", m.nodeId())
                .put("url", m.url())
                .put("ready", m.ready())
                .put("self", m.nodeId().equals(membership.nodeId()))));
        RecoveryReport r = recovery.get();
        return new JsonObject()
                .put("clustered", membership != null)
                .put("member_count", membership == null ? 1 : membership.memberCount())
                .put("members", list)
                .put("sharded", placement != null)
                .put("replication_factor", placement == null ? null : placement.replicationFactor())
                .put(
                        "recovery",
                        new JsonObject()
                                .put("peer", r.peer())
                                .put("partitions", r.partitions())
                                .put("events", r.events())
                                .put("exact", r.exact())
                                .put("seconds", r.millis() / 1000.0));
    }

    /**
     * Cumulative counts the dashboard turns into rates: events taken by the index whatever their status (Dynamo's
     * {@code kv_cache_events_applied} summed), queries answered and their seconds.
     */
    private JsonObject totals() {
        long events = 0;
        for (long n : counters.appliedSnapshot().values()) {
            events += n;
        }
        long queries = 0;
        double seconds = 0;
        Map<String, HttpRequestMetrics.Totals> http = meters.http().totals();
        for (String endpoint : QUERY_ENDPOINTS) {
            HttpRequestMetrics.Totals t = http.get(endpoint);
            if (t != null) {
                queries += t.requests();
                seconds += t.seconds();
            }
        }
        return new JsonObject()
                .put("events_applied", events)
                .put("queries", queries)
                .put("query_seconds", seconds);
    }

    private JsonArray partitions(List<PartitionFigures> figures) {
        Map<PartitionKey, QueryQuality.Totals> quality = new HashMap<>();
        meters.queryQuality().totals().forEach(t -> quality.put(new PartitionKey(t.model(), t.routingGroup()), t));
        JsonArray out = new JsonArray();
        for (PartitionFigures f : figures) {
            PartitionKey key = f.partition().key();
            PartitionStats s = f.stats();
            QueryQuality.Totals q = quality.get(key);
            out.add(new JsonObject()
                    .put("model", key.modelName())
                    .put("tenant", key.routingGroup())
                    .put("block_size", f.partition().blockSize())
                    .put("blocks", tiers(s.heldPerTier()))
                    .put("device_blocks", s.deviceBlocks())
                    .put("memory_bytes", s.memoryBytes())
                    .put("engines", s.engines().size())
                    .put("queries", q == null ? 0 : q.queries())
                    .put("zero_match_queries", q == null ? 0 : q.zeroMatch())
                    .put("mean_match_ratio", q == null || q.queries() == 0 ? null : q.ratioSum() / q.queries())
                    .put(
                            "mean_matching_instances",
                            q == null || q.queries() == 0 ? null : (double) q.instancesSum() / q.queries()));
        }
        return out;
    }

    private JsonArray workers(List<Registry.WorkerView> workers, List<PartitionFigures> figures, long now) {
        Map<Long, Map<Integer, PartitionStats.Engine>> engines = new HashMap<>();
        figures.forEach(f -> f.stats()
                .engines()
                .forEach(e -> engines.computeIfAbsent(e.workerId(), k -> new TreeMap<>())
                        .put(e.dpRank(), e)));
        JsonArray out = new JsonArray();
        for (Registry.WorkerView w : workers) {
            Map<Integer, PartitionStats.Engine> mine = new TreeMap<>(engines.getOrDefault(w.workerId(), Map.of()));
            List<ListenerState> states = new ArrayList<>();
            JsonArray ranks = new JsonArray();
            for (Listener l : w.listeners()) {
                states.add(l.state());
                ranks.add(activity(
                        new JsonObject()
                                .put("dp_rank", l.dpRank())
                                .put("endpoint", l.endpoint())
                                .put("replay_endpoint", l.replayEndpoint())
                                .put("status", l.state().jsonName())
                                .put("last_error", l.currentError())
                                .put("previous_error", l.pastError())
                                .put(
                                        "error_at",
                                        l.lastError() == null
                                                ? null
                                                : java.time.Instant.ofEpochMilli(l.lastErrorAtMillis())
                                                        .toString())
                                .put("lost_batches", lostBatches(w.key(), l)),
                        mine.remove(l.dpRank()),
                        now));
            }
            // Ranks the engine's batches name without a listener of their own (an engine serving several ranks
            // through one publisher): what they hold and send is listed too, under no listener state.
            mine.forEach((rank, e) -> ranks.add(activity(
                    new JsonObject().put("dp_rank", rank).put("status", null).put("listener", false), e, now)));
            JsonObject worker = new JsonObject()
                    .put("instance_id", Long.toUnsignedString(w.workerId()))
                    .put("instance_name", w.name())
                    .put("model", w.key().modelName())
                    .put("tenant", w.key().routingGroup())
                    .put("block_size", w.blockSize())
                    .put("status", ListenerState.aggregate(states).jsonName())
                    .put("ranks", ranks);
            if (placement != null) {
                worker.put("shard_holders", new JsonArray(placement.holders(w.key(), w.workerId())));
            }
            out.add(worker);
        }
        return out;
    }

    /** Batches the rank's stream lost for good: 0 when the index holds it exactly. */
    private long lostBatches(PartitionKey key, Listener l) {
        Watermarks.Watermark mark = watermarks.find(new StreamId(key, l.workerId(), l.dpRank()));
        return mark == null ? 0 : mark.lostBatches();
    }

    /** A rank's figures, when this node has its partition's engine record (a sharded node may not). */
    private static JsonObject activity(JsonObject rank, PartitionStats.Engine e, long now) {
        if (e != null) {
            rank.put("blocks", tiers(e.heldPerTier()))
                    .put("stored_blocks", e.storedBlocks())
                    .put("removed_blocks", e.removedBlocks())
                    .put("events", e.events())
                    .put("last_event_age_seconds", NodeMetrics.ageSeconds(e.lastEventMillis(), now));
        }
        return rank;
    }

    private static JsonObject tiers(long[] perTier) {
        JsonObject out = new JsonObject();
        for (StorageTier t : StorageTier.values()) {
            out.put(t.jsonName(), perTier[t.ordinal()]);
        }
        return out;
    }
}
