package dev.kvindexer.node;

import dev.kvindexer.cluster.ClusterMembership;
import dev.kvindexer.cluster.ClusterValues;
import dev.kvindexer.cluster.PeerDirectory;
import dev.kvindexer.conductor.CppConductor;
import dev.kvindexer.conductor.http.CppConductorRoutes;
import dev.kvindexer.conductor.registry.CppConductorSubscriptions;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.http.DumpAdmission;
import dev.kvindexer.http.DynamoRoutes;
import dev.kvindexer.http.IndexerApi;
import dev.kvindexer.http.MooncakeJsonRoutes;
import dev.kvindexer.http.MsgpackApi;
import dev.kvindexer.http.StandardEventsRoute;
import dev.kvindexer.ingest.ListenerCapacity;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.metrics.DataDirFigures;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.NodeMeters;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.partition.MemoryBudget;
import dev.kvindexer.partition.PartitionHost;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.query.IndexQueries;
import dev.kvindexer.recovery.DataDirectory;
import dev.kvindexer.recovery.GapRepair;
import dev.kvindexer.recovery.RecoveryReport;
import dev.kvindexer.registry.Registrar;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.web.AccessLog;
import dev.kvindexer.web.Readiness;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/** Builds a node's parts from its configuration, each in the order the others need it; {@link IndexerNode} runs them. */
final class NodeAssembly {
    /** Decoded batches allowed between the ingest threads and the partitions (bounded memory under a flood). */
    static final int MAX_IN_FLIGHT_BATCHES = 10_000;
    /** A full network budget makes the node unready while it refused a connection this recently. */
    static final java.time.Duration NETWORK_PROBLEM_WINDOW = java.time.Duration.ofSeconds(5);

    private NodeAssembly() {}

    static IndexerNode assemble(
            Vertx vertx, HazelcastClusterManager manager, ServeConfig config, NodeMeters meters, NetworkBudget network)
            throws Exception {
        EventCounters counters = new EventCounters();
        boolean gated = config.clustered()
                || !config.peers().isEmpty()
                || config.minInitialWorkers() > 0
                || config.durability().persistent();
        ReadyGate gate = gated ? ReadyGate.closed("starting") : ReadyGate.open();
        ZmqIngest ingest = ingestOf(vertx, config, counters, network, gate, meters.spans());
        Watermarks watermarks = new Watermarks();
        MemoryBudget memory = new MemoryBudget(config.indexMemory().maxBytes());
        ClusterValues values = new ClusterValues(config.security().authToken(), meters.cluster());
        ClusterMembership membership =
                manager == null ? null : IndexerNode.await(ClusterMembership.open(vertx, manager, values));
        PeerDirectory peers = new PeerDirectory(membership);
        GapRepair gapRepair = new GapRepair(
                counters,
                config.security().authToken(),
                config.recovery(),
                peers::all,
                (stream, text) -> ingest.recordError(stream.workerId(), stream.dpRank(), text));
        PartitionHost partitions = new PartitionHost(
                vertx,
                counters,
                watermarks,
                ingest.replays(),
                ingest.inFlight(),
                memory,
                config.durability().inexactStreams(),
                gapRepair);
        NodeTopology topology =
                NodeTopology.open(vertx, manager, config, partitions, ingest, values, meters.cluster(), meters.spans());
        Registry registry = topology.registry();
        AccessLog accessLog = config.accessLog() == null ? null : AccessLog.open(config.accessLog());
        CppConductorSubscriptions conductor = new CppConductorSubscriptions(
                IndexerNode.await(CppConductor.deploy(vertx)),
                ingest,
                config.compat().loraIds());
        DataDirectory dataDir = config.durability().persistent()
                ? DataDirectory.open(
                        vertx, config.durability().dataDir(), config.recovery().maxBytes(), registry)
                : null;
        NodeParts parts = new NodeParts(
                counters,
                watermarks,
                ingest,
                topology,
                membership,
                peers,
                accessLog,
                meters,
                manager == null ? null : manager.getHazelcastInstance(),
                gate,
                dataDir,
                gapRepair,
                conductor);
        return withViews(vertx, parts, config, network, memory);
    }

    /** The node's readiness, metrics, dashboard view and the services its routes get, over its assembled parts. */
    private static IndexerNode withViews(
            Vertx vertx, NodeParts parts, ServeConfig config, NetworkBudget network, MemoryBudget memory) {
        Readiness readiness = readinessOf(parts, network);
        Supplier<DataDirFigures> disk = parts.dataDir() == null ? () -> null : parts.dataDir()::figures;
        NodeMetrics metrics = new NodeMetrics(
                parts.registry(),
                parts.ingest(),
                parts.counters(),
                parts.meters(),
                parts.membership(),
                parts.accessLog(),
                memory,
                readiness,
                parts.watermarks(),
                disk,
                network);
        AtomicReference<RecoveryReport> recovery = new AtomicReference<>(RecoveryReport.NONE);
        if (parts.handover() != null) {
            // A sharded node that joins ready nodes recovers by taking its shards over, after its gate opened.
            parts.handover().onJoined(r -> {
                if (r.peer() != null && recovery.get().peer() == null) {
                    recovery.set(r);
                    parts.meters().recovered(r.millis(), r.events(), r.exact());
                }
            });
        }
        AtomicReference<Supplier<Future<JsonObject>>> selection = new AtomicReference<>();
        NodeOverview overview = new NodeOverview(
                parts.registry(),
                readiness,
                parts.counters(),
                parts.meters(),
                memory,
                parts.membership(),
                parts.topology().placement(),
                recovery::get,
                parts.watermarks(),
                disk,
                () -> selection.get() == null
                        ? Future.succeededFuture()
                        : selection.get().get());
        IndexQueries queries = new IndexQueries(parts.registry(), parts.meters().queryQuality());
        DumpAdmission dumps = new DumpAdmission(network);
        IndexerApi api = apiOf(parts, config, network, readiness, metrics, overview, queries, dumps);
        return new IndexerNode(vertx, parts, api, queries, dumps, recovery, selection, network);
    }

    private static ZmqIngest ingestOf(
            Vertx vertx,
            ServeConfig config,
            EventCounters counters,
            NetworkBudget network,
            ReadyGate gate,
            Spans spans) {
        return new ZmqIngest(
                vertx,
                new ZmqIngest.Config(
                        config.ingestThreads(),
                        MAX_IN_FLIGHT_BATCHES,
                        config.maxEventBytes(),
                        ZmqIngest.Config.SUPERVISE_EVERY,
                        config.maxListeners() > 0 ? config.maxListeners() : ListenerCapacity.derived(),
                        config.network().messageTimeout()),
                counters,
                network,
                gate::isOpen,
                spans);
    }

    /** Startup first: while it runs, a poller failure is not what an operator needs to hear about. */
    private static Readiness readinessOf(NodeParts parts, NetworkBudget network) {
        List<Readiness.Check> checks = new ArrayList<>(List.of(
                parts.gate()::reason,
                parts.ingest()::degradedReason,
                () -> network.problem(NETWORK_PROBLEM_WINDOW.toNanos())));
        if (parts.dataDir() != null) {
            checks.add(parts.dataDir()::problem);
        }
        return new Readiness(checks);
    }

    /** The HTTP API over the node's parts: each route group gets the ports it answers from. */
    private static IndexerApi apiOf(
            NodeParts parts,
            ServeConfig config,
            NetworkBudget network,
            Readiness readiness,
            NodeMetrics metrics,
            NodeOverview overview,
            IndexQueries queries,
            DumpAdmission dumps) {
        Registrar registrar = parts.topology().registrar();
        MsgpackApi msgpack = new CppConductorRoutes(parts.conductor());
        return new IndexerApi(
                new DynamoRoutes(
                        registrar,
                        parts.registrations(),
                        parts.registry(),
                        parts.watermarks(),
                        parts.peers(),
                        queries,
                        dumps,
                        config.compat().tenantFallback()),
                new MooncakeJsonRoutes(registrar, parts.registry(), queries, msgpack),
                new StandardEventsRoute(parts.registry()),
                msgpack,
                readiness,
                metrics::render,
                overview::render,
                parts.meters().http(),
                parts.accessLog(),
                network,
                config.testEndpoints());
    }
}
