package dev.kvindexer.cli;

import dev.kvindexer.config.AccessLogConfig;
import dev.kvindexer.config.ClientCompat;
import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.config.DurabilityConfig;
import dev.kvindexer.config.GrpcConfig;
import dev.kvindexer.config.IndexMemory;
import dev.kvindexer.config.InexactStreamPolicy;
import dev.kvindexer.config.NetworkConfig;
import dev.kvindexer.config.RecoveryConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.config.SlotTrackerConfig;
import dev.kvindexer.config.WorkerSpec;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.selectservice.SelectServiceVerticle;
import dev.kvindexer.tracker.SlotTrackerVerticle;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code serve}: runs the indexer with Dynamo's flags (docs/api/dynamo.md#command-line). */
@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        description = "Run the KV indexer HTTP service (Dynamo standalone indexer compatible).")
public final class ServeCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);
    /** How often the C heap's free memory goes back to the system ({@link NativeHeapTrim}). */
    private static final Duration NATIVE_TRIM_PERIOD = Duration.ofSeconds(1);

    // Defaults live in conf/kvindexer.json; LayeredDefaults puts env KVINDEXER_* and --config in front of them.

    @Mixin
    HttpEdgeOptions edge = new HttpEdgeOptions();

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description =
                    "JSON settings file, keys named as these options "
                            + "without dashes; flags and env win over it, it wins over conf/kvindexer.json (env KVINDEXER_CONFIG).")
    java.nio.file.Path config;

    @Option(
            names = "--threads",
            description = "Event-loop threads hosting partitions and HTTP "
                    + "(env KVINDEXER_THREADS; default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(
            names = "--ingest-threads",
            description = "ZMQ poller threads shared by all listeners "
                    + "(env KVINDEXER_INGEST_THREADS; default: ${DEFAULT-VALUE}).")
    int ingestThreads;

    @Option(
            names = "--block-size",
            description = "Block size of the --workers registrations, required with --workers "
                    + "(env KVINDEXER_BLOCK_SIZE; default: none).")
    Integer blockSize;

    @Option(
            names = "--workers",
            description = "Initial registrations: instance_id[:dp_rank]=endpoint,... "
                    + "(env KVINDEXER_WORKERS; default: none).")
    String workers;

    @Option(
            names = "--model-name",
            description = "Model of the --workers, and the model whose registered engines the gRPC port answers "
                    + "for (env KVINDEXER_MODEL_NAME; default: ${DEFAULT-VALUE}).")
    String modelName;

    /** Hidden, as Dynamo hides it. */
    @Option(
            names = "--tenant-id",
            hidden = true,
            description = "Ignored; with --tenant-fallback the group of the "
                    + "--workers when --routing-group is absent (env KVINDEXER_TENANT_ID; default: ${DEFAULT-VALUE}).")
    String tenantId;

    @Option(
            names = "--routing-group",
            description = "Group of the --workers " + "(env KVINDEXER_ROUTING_GROUP; default: default).")
    String routingGroup;

    @Option(
            names = "--tenant-fallback",
            fallbackValue = "true",
            arity = "0..1",
            description = "Older Dynamo group rule: tenant_id names the group when routing_group is absent (requests "
                    + "and --tenant-id) and GET /workers echoes it; off, tenant_id is ignored as Dynamo ignores it "
                    + "(env KVINDEXER_TENANT_FALLBACK; default: ${DEFAULT-VALUE}).")
    boolean tenantFallback;

    @Option(
            names = "--conductor-lora-ids",
            fallbackValue = "true",
            arity = "0..1",
            description =
                    "C++ Conductor engine registrations accept BlockStored events with a lora_id when their "
                            + "lora_name is the registration's; the Conductor refuses them all, so its LoRA contexts never "
                            + "gain GPU blocks from current vLLM (env KVINDEXER_CONDUCTOR_LORA_IDS; default: ${DEFAULT-VALUE}).")
    boolean conductorLoraIds;

    @Option(
            names = "--peers",
            description =
                    "Comma-separated peer indexer URLs for startup recovery " + "(env KVINDEXER_PEERS; default: none).")
    String peers;

    @Mixin
    ClusterOptions clusterOptions = new ClusterOptions();

    @Option(
            names = "--slot-tracker-port",
            description = "Also run the slot tracker service (as `slot-tracker` does) "
                    + "on this port, same host (env KVINDEXER_SLOT_TRACKER_PORT; default: off).")
    Integer slotTrackerPort;

    @Option(
            names = "--select-port",
            description = "Also run the selection service (as `select-service` does) on "
                    + "this port, same host, over this node's index (env KVINDEXER_SELECT_PORT; default: off).")
    Integer selectPort;

    @Mixin
    SelectLimitOptions selectLimits = new SelectLimitOptions();

    @Option(
            names = "--grpc-port",
            description = "Also serve SGLang's KVIndexer gRPC service (kv_indexer.v1, as sgl-router's "
                    + "--kv-indexer-endpoint and kv-indexer-bridge expect it) on this port, same host, TLS and token "
                    + "(env KVINDEXER_GRPC_PORT; default: off).")
    Integer grpcPort;

    @Option(
            names = "--grpc-prefix-max-inflight",
            paramLabel = "N",
            description = "MatchExternalKvPrefix calls answered at once on the gRPC port; more are refused at once "
                    + "with RESOURCE_EXHAUSTED, which the router takes as overload (env "
                    + "KVINDEXER_GRPC_PREFIX_MAX_INFLIGHT; default: ${DEFAULT-VALUE}).")
    int grpcPrefixMaxInflight;

    @Option(
            names = "--grpc-max-workers",
            paramLabel = "N",
            description = "Most workers SGLang's KV indexer bridge may configure or report at once; a call that would "
                    + "make more is refused with RESOURCE_EXHAUSTED (env KVINDEXER_GRPC_MAX_WORKERS; default: "
                    + "${DEFAULT-VALUE}).")
    int grpcMaxWorkers;

    @Option(
            names = "--grpc-max-placements",
            paramLabel = "N",
            description = "Most (block, worker, tier) placements the bridge's reports may make the node hold; a batch "
                    + "or snapshot that could pass it is refused with RESOURCE_EXHAUSTED and changes nothing (env "
                    + "KVINDEXER_GRPC_MAX_PLACEMENTS; default: ${DEFAULT-VALUE}).")
    long grpcMaxPlacements;

    @Option(
            names = "--access-log",
            description = "Append one JSON line per request to this file; POST /reopen_logs "
                    + "reopens it after rotation (env KVINDEXER_ACCESS_LOG; default: off).")
    java.nio.file.Path accessLog;

    @Option(
            names = "--trace-id-header",
            description = "Request header logged as trace_id in the access log "
                    + "(env KVINDEXER_TRACE_ID_HEADER; default: ${DEFAULT-VALUE}).")
    String traceIdHeader;

    @Option(
            names = "--access-log-local-time",
            fallbackValue = "true",
            arity = "0..1",
            description = "Access log timestamps in local time instead of UTC "
                    + "(env KVINDEXER_ACCESS_LOG_LOCAL_TIME; default: ${DEFAULT-VALUE}).")
    boolean accessLogLocalTime;

    @Option(
            names = "--auth-token",
            description = "Bearer token required on mutating and admin routes (/register, "
                    + "/unregister, /events, peer, test and log routes); prefer the env variable or --config to a flag, which "
                    + "`ps` shows (env KVINDEXER_AUTH_TOKEN; default: none, no authentication).")
    String authToken;

    @Option(
            names = "--auth-all",
            fallbackValue = "true",
            arity = "0..1",
            description = "Require the token on every route, /query, /metrics, /health and /ready included "
                    + "(env KVINDEXER_AUTH_ALL; default: ${DEFAULT-VALUE}).")
    boolean authAll;

    @Option(
            names = "--tls-cert",
            description = "PEM certificate chain: serve HTTPS instead of HTTP, with --tls-key "
                    + "(env KVINDEXER_TLS_CERT; default: none).")
    java.nio.file.Path tlsCert;

    @Option(names = "--tls-key", description = "PEM private key of --tls-cert (env KVINDEXER_TLS_KEY; default: none).")
    java.nio.file.Path tlsKey;

    @Option(
            names = "--max-event-bytes",
            paramLabel = "BYTES",
            description = "Largest ZMQ message taken from a "
                    + "publisher; a larger one is counted as a decode error and its connection is dropped and made again "
                    + "(env KVINDEXER_MAX_EVENT_BYTES; default: ${DEFAULT-VALUE}).")
    long maxEventBytes;

    @Option(
            names = "--max-listeners",
            paramLabel = "N",
            description = "Most engine connections (listeners, one "
                    + "per instance and dp_rank) the node runs; a registration past it is refused with 429. 0 derives it from "
                    + "the process's open-file limit, one descriptor a listener less a reserve, at most 20000 "
                    + "(env KVINDEXER_MAX_LISTENERS; default: ${DEFAULT-VALUE}).")
    int maxListeners;

    @Option(
            names = "--recovery-max-bytes",
            paramLabel = "BYTES",
            description = "Largest dump or snapshot startup "
                    + "recovery takes from a peer; a larger one is abandoned and the next peer tried "
                    + "(env KVINDEXER_RECOVERY_MAX_BYTES; default: ${DEFAULT-VALUE}).")
    long recoveryMaxBytes;

    @Option(
            names = "--max-index-memory",
            paramLabel = "SIZE",
            description = "Heap all partitions' indexes may hold "
                    + "together, as bytes (512m, 2g) or a share of the maximum heap (50%%); over it, the least recently stored "
                    + "or queried blocks are evicted (env KVINDEXER_MAX_INDEX_MEMORY; default: ${DEFAULT-VALUE}).")
    String maxIndexMemory;

    @Option(
            names = "--max-network-memory",
            paramLabel = "SIZE",
            description = "Heap all ports together may hold on behalf of their peers: ZMQ frames and messages "
                    + "received in part or waiting to be applied, replies not yet read, bus and cluster frames under "
                    + "way; as bytes (64m) or a share of the maximum heap (20%%). A connection that would pass it is "
                    + "dropped and counted (env KVINDEXER_MAX_NETWORK_MEMORY; default: ${DEFAULT-VALUE}).")
    String maxNetworkMemory;

    @Option(
            names = "--message-timeout",
            paramLabel = "SECONDS",
            description = "How long a ZMQ frame or message, or a cluster frame, may take to arrive whole after its "
                    + "first byte; then its connection is dropped, however slowly bytes still trickle "
                    + "(env KVINDEXER_MESSAGE_TIMEOUT; default: ${DEFAULT-VALUE}).")
    long messageTimeout;

    @Option(
            names = "--recovery-timeout",
            paramLabel = "SECONDS",
            description = "How long startup recovery waits for "
                    + "one peer's whole dump or snapshot before it tries the next "
                    + "(env KVINDEXER_RECOVERY_TIMEOUT; default: ${DEFAULT-VALUE}).")
    long recoveryTimeout;

    @Option(
            names = "--data-dir",
            paramLabel = "DIR",
            description = "Directory the node writes its index to every --snapshot-interval and on shutdown, and "
                    + "loads the newest good snapshot from when no peer can be recovered from; unset keeps the "
                    + "index in memory only (env KVINDEXER_DATA_DIR; default: none).")
    Path dataDir;

    @Option(
            names = "--snapshot-interval",
            paramLabel = "SECONDS",
            description = "How often a node with --data-dir writes its snapshot "
                    + "(env KVINDEXER_SNAPSHOT_INTERVAL; default: ${DEFAULT-VALUE}).")
    long snapshotInterval;

    @Option(
            names = "--recover-from-disk",
            description = "Load the data directory at startup even when a peer could be recovered from "
                    + "(env KVINDEXER_RECOVER_FROM_DISK; default: ${DEFAULT-VALUE}).")
    boolean recoverFromDisk;

    @Option(
            names = "--inexact-stream-policy",
            paramLabel = "keep|clear",
            description = "What becomes of a stream's blocks when batches of it are lost for good (no replay "
                    + "endpoint, or a replay that could not bring them back): keep them, or clear them "
                    + "(env KVINDEXER_INEXACT_STREAM_POLICY; default: ${DEFAULT-VALUE}).")
    String inexactStreamPolicy;

    @Option(
            names = "--warm-up",
            paramLabel = "SECONDS",
            description = "Before serving, feed and query a private index on a loopback port for this long, so the "
                    + "JIT compiler has compiled the query and ingest paths before the first real query; the node "
                    + "starts that much later (env KVINDEXER_WARM_UP; default: ${DEFAULT-VALUE}, none).")
    long warmUp;

    /** The selection service on --select-port: guarded by the indexer's own token and TLS. */
    SelectServiceConfig selectService(ServeConfig config) {
        return SelectServiceConfig.on(config.host(), selectPort)
                .withLimits(selectLimits.limits())
                .withSecurity(config.security());
    }

    /** SGLang's gRPC service to run beside the indexer, or null. */
    GrpcConfig grpc() {
        return grpcPort == null
                ? null
                : new GrpcConfig(
                        edge.host,
                        grpcPort,
                        grpcPrefixMaxInflight,
                        modelName,
                        workersRoutingGroup(),
                        grpcMaxWorkers,
                        grpcMaxPlacements,
                        edge.limits().idleTimeout());
    }

    /** The slot tracker to run beside the indexer, or null. */
    SlotTrackerConfig slotTracker() {
        return slotTrackerPort == null ? null : SlotTrackerConfig.on(edge.host, slotTrackerPort, edge.limits());
    }

    ServeConfig config() {
        ServeConfig config = new ServeConfig(
                edge.host,
                edge.port,
                threads,
                ingestThreads,
                WorkerSpec.parseList(workers),
                blockSize,
                modelName,
                workersRoutingGroup(),
                commaList(peers),
                ServeConfig.truthy(System.getenv("DYN_KV_INDEXER_TEST_ENDPOINTS")),
                ServeConfig.minInitialWorkers(System.getenv("DYN_ROUTER_MIN_INITIAL_WORKERS")));
        config = config.withSecurity(new SecurityConfig(authToken, authAll, tlsCert, tlsKey))
                .withHttp(edge.limits())
                .withMaxEventBytes(maxEventBytes)
                .withMaxListeners(maxListeners)
                .withCompat(new ClientCompat(tenantFallback, conductorLoraIds))
                .withRecovery(new RecoveryConfig(recoveryMaxBytes, Duration.ofSeconds(recoveryTimeout)))
                .withIndexMemory(
                        IndexMemory.parse(maxIndexMemory, Runtime.getRuntime().maxMemory()))
                .withNetwork(NetworkConfig.parse(
                        maxNetworkMemory, Runtime.getRuntime().maxMemory(), Duration.ofSeconds(messageTimeout)))
                .withDurability(new DurabilityConfig(
                        dataDir,
                        Duration.ofSeconds(snapshotInterval),
                        recoverFromDisk,
                        InexactStreamPolicy.parse(inexactStreamPolicy)));
        if (accessLog != null) {
            config = config.withAccessLog(new AccessLogConfig(accessLog, traceIdHeader, accessLogLocalTime));
        }
        ClusterConfig cluster = clusterOptions.settings();
        return cluster == null ? config : config.withCluster(cluster);
    }

    private String workersRoutingGroup() {
        if (routingGroup != null) {
            return routingGroup;
        }
        return tenantFallback && tenantId != null ? tenantId : "default";
    }

    static List<String> commaList(String value) {
        return value == null
                ? List.of()
                : Arrays.stream(value.split(","))
                        .map(String::trim)
                        .filter(s -> !s.isEmpty())
                        .collect(Collectors.toList());
    }

    /**
     * The Conductors' static registrations, through this node's own {@code /register} as the Conductors subscribe
     * theirs once their HTTP server runs. Its port is {@code --port}, not the file's {@code http_server_port}.
     */
    private static void registerStatics(
            ConductorConfigFile.Contents statics, String path, ServeConfig config, int port) {
        if (statics.httpServerPort() != 0 && statics.httpServerPort() != port) {
            LOG.warn(
                    "CONDUCTOR_CONFIG_PATH {} names http_server_port {}; this node listens on {} (--port)",
                    path,
                    statics.httpServerPort(),
                    port);
        }
        if (statics.entries().isEmpty()) {
            return;
        }
        if (config.security().tlsCert() != null) {
            LOG.error(
                    "CONDUCTOR_CONFIG_PATH {}: static registrations need the plain HTTP port; register over HTTPS",
                    path);
            return;
        }
        String host = config.host().equals("0.0.0.0") || config.host().equals("::") ? "127.0.0.1" : config.host();
        int registered = ConductorConfigFile.registerAll(
                statics.entries(),
                java.net.URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port),
                config.security().authToken());
        LOG.info(
                "CONDUCTOR_CONFIG_PATH {}: {} of {} static registrations",
                path,
                registered,
                statics.entries().size());
    }

    /** The warm-up is worth having, never worth not starting: a failure of it is logged and startup goes on. */
    private static void warmUp(int threads, Duration budget) {
        LOG.info("warming up for {} s on a private index (--warm-up)", budget.toSeconds());
        try {
            StartupWarmUp.Report report = StartupWarmUp.run(threads, budget);
            LOG.info(
                    "warmed up in {} ms: {} queries, {} blocks stored and removed",
                    report.took().toMillis(),
                    report.queries(),
                    report.blocks());
        } catch (Exception e) {
            LOG.warn("warm-up failed, starting without it: {}", e.toString());
        }
    }

    @Override
    public Integer call() throws Exception {
        ServeConfig config;
        ConductorConfigFile.Contents statics;
        String conductorConfig = System.getenv("CONDUCTOR_CONFIG_PATH");
        try {
            if (warmUp < 0) {
                throw new IllegalArgumentException("--warm-up must be 0 (none) or more seconds, not " + warmUp);
            }
            config = config();
            if (selectPort != null) {
                selectService(config);
            }
            statics = conductorConfig == null || conductorConfig.isBlank()
                    ? null
                    : ConductorConfigFile.read(java.nio.file.Path.of(conductorConfig));
        } catch (IllegalArgumentException | java.io.IOException e) {
            System.err.println("kvindexer serve: " + e.getMessage());
            return 2;
        }
        if (warmUp > 0) {
            warmUp(config.threads(), Duration.ofSeconds(warmUp));
        }
        IndexerNode node;
        try {
            node = IndexerNode.start(config);
        } catch (Exception e) {
            System.err.println("kvindexer serve: startup failed: " + e.getMessage());
            return 1;
        }
        LOG.info(
                "kvindexer listening on http://{}:{}{}",
                config.host(),
                node.httpPort(),
                config.clustered() ? " in cluster " + config.cluster().name() : "");
        if (statics != null) {
            registerStatics(statics, conductorConfig, config, node.httpPort());
        }
        HugePageAdvice.forThisProcess().ifPresent(LOG::info);
        FatalErrors.outOfMemoryAdviceForThisProcess().ifPresent(LOG::warn);
        // The first trim gives back what the warm-up's compilations freed; later ones what the traffic's do.
        NativeHeapTrim.forThisProcess().ifPresent(trim -> trim.every(NATIVE_TRIM_PERIOD));
        if (slotTracker() != null) {
            try {
                SlotTrackerVerticle tracker =
                        SlotTrackerCommand.deploy(node.vertx(), slotTracker(), node::micrometerScrape);
                LOG.info("slot tracker listening on http://{}:{}", config.host(), tracker.actualPort());
            } catch (Exception e) {
                System.err.println("kvindexer serve: slot tracker startup failed: " + e.getMessage());
                node.close();
                return 1;
            }
        }
        GrpcConfig grpc = grpc();
        if (grpc != null) {
            try {
                // in a cluster, copying another member's bridge state takes at most the recovery timeout
                int port = node.serveGrpc(grpc, config.security(), config.recovery(), config.threads())
                        .toCompletionStage()
                        .toCompletableFuture()
                        .get(config.recovery().timeout().toSeconds() + 30, java.util.concurrent.TimeUnit.SECONDS);
                LOG.info("SGLang KVIndexer gRPC service listening on {}:{}", config.host(), port);
            } catch (Exception e) {
                System.err.println("kvindexer serve: gRPC service startup failed: " + e.getMessage());
                node.close();
                return 1;
            }
        }
        if (selectPort != null) {
            try {
                SelectServiceVerticle service = SelectServiceCommand.deploy(
                        node, selectService(config), SelectionConfig.fromEnvironment(System.getenv()));
                LOG.info("selection service listening on http://{}:{}", config.host(), service.actualPort());
            } catch (Exception e) {
                System.err.println("kvindexer serve: selection service startup failed: " + e.getMessage());
                node.close();
                return 1;
            }
        }
        UntilShutdown.await("kvindexer-shutdown", node::close, IndexerNode.CLOSE_BUDGET.plusSeconds(5));
        return 0;
    }
}
