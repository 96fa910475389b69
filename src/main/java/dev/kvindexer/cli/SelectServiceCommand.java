package dev.kvindexer.cli;

import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.EmbeddedIndex;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.select.NotApplied;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.select.SessionBindings;
import dev.kvindexer.selectservice.SelectServiceVerticle;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code select-service}: Dynamo's standalone selection service (docs/api/selection.md), {@code python -m dynamo.select_service}
 * with the same flags, over an embedded indexer node whose own HTTP port stays on loopback.
 */
@Command(
        name = "select-service",
        mixinStandardHelpOptions = true,
        description = "Run the worker selection service (Dynamo compatible): worker catalog, KV- and load-aware "
                + "selection, reservations of active load.")
public final class SelectServiceCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(SelectServiceCommand.class);
    private static final String PUBLIC_TRACKING_HASH = "public-xxh3-v1";
    private static final String KEYED_TRACKING_HASH = "keyed-xxh3-v1";

    @Mixin
    HttpEdgeOptions edge = new HttpEdgeOptions();

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "JSON settings file, keys named as these options "
                    + "without dashes (env KVINDEXER_SELECT_SERVICE_CONFIG).")
    java.nio.file.Path config;

    @Option(
            names = "--threads",
            description =
                    "Index partition threads (env KVINDEXER_SELECT_SERVICE_THREADS; " + "default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(
            names = "--indexer-peers",
            description = "Comma-separated HTTP base URLs of selectors or indexers to "
                    + "recover the index from at startup, by /dump (env KVINDEXER_SELECT_SERVICE_INDEXER_PEERS).")
    String indexerPeers;

    @Option(
            names = "--indexer-port",
            description = "Loopback port of the embedded indexer's own HTTP API; 0 takes "
                    + "a free one (env KVINDEXER_SELECT_SERVICE_INDEXER_PORT; default: ${DEFAULT-VALUE}).")
    int indexerPort;

    @Option(
            names = "--replica-sync-port",
            description = "ZMQ PUB port for replica sync of active load "
                    + "(env KVINDEXER_SELECT_SERVICE_REPLICA_SYNC_PORT; default: off).")
    Integer replicaSyncPort;

    @Option(
            names = "--replica-sync-peers",
            description = "Comma-separated ZMQ PUB endpoints of peer selectors; "
                    + "needs --replica-sync-port (env KVINDEXER_SELECT_SERVICE_REPLICA_SYNC_PEERS).")
    String replicaSyncPeers;

    @Option(
            names = "--session-affinity-ttl-secs",
            description = "Bind each session to the worker rank that served it, for this many seconds after its "
                    + "last reservation ends (1 to 31536000; env KVINDEXER_SELECT_SERVICE_SESSION_AFFINITY_TTL_SECS; "
                    + "default: off).")
    Long sessionAffinityTtlSecs;

    @Option(
            names = "--selection-cache-ttl-secs",
            description =
                    "How long a selection with an id waits for its "
                            + "replay booking (env KVINDEXER_SELECT_SERVICE_SELECTION_CACHE_TTL_SECS; default: ${DEFAULT-VALUE}).")
    double selectionCacheTtlSecs;

    @Option(
            names = "--selection-cache-max-entries",
            description = "Pending selections kept at most "
                    + "(env KVINDEXER_SELECT_SERVICE_SELECTION_CACHE_MAX_ENTRIES; default: ${DEFAULT-VALUE}).")
    int selectionCacheMaxEntries;

    @Option(
            names = "--selection-cache-max-bytes",
            description = "Approximate bytes of pending selections kept at "
                    + "most (env KVINDEXER_SELECT_SERVICE_SELECTION_CACHE_MAX_BYTES; default: ${DEFAULT-VALUE}).")
    long selectionCacheMaxBytes;

    @Option(
            names = "--auth-token",
            description = "Bearer token required on the routes that change the catalog or "
                    + "the replica peers (POST, PATCH and DELETE /workers, /replica_sync/*); prefer the env variable or "
                    + "--config to a flag, which `ps` shows (env KVINDEXER_SELECT_SERVICE_AUTH_TOKEN; default: none).")
    String authToken;

    @Option(
            names = "--auth-all",
            fallbackValue = "true",
            arity = "0..1",
            description = "Require the token on every "
                    + "route, /select, /metrics, /health and /ready included (env KVINDEXER_SELECT_SERVICE_AUTH_ALL; "
                    + "default: ${DEFAULT-VALUE}).")
    boolean authAll;

    @Mixin
    SelectLimitOptions limits = new SelectLimitOptions();

    @Option(
            names = "--router-assume-kv-reuse",
            negatable = true,
            description = "Book a token prompt's real sequence hashes (--no-router-assume-kv-reuse: fresh ones), "
                    + "over DYN_ROUTER_ASSUME_KV_REUSE.")
    Boolean assumeKvReuse;

    @Option(
            names = "--router-tracking-hash",
            paramLabel = "ALGORITHM",
            description = "public-xxh3-v1 (the one applied) or keyed-xxh3-v1 (accepted, not applied: sequence "
                    + "hashes from token_ids stay public-xxh3-v1).")
    String trackingHash;

    @Option(
            names = "--router-tracking-key-file",
            paramLabel = "FILE",
            description = "The key of keyed tracking hashes: accepted, not applied.")
    String trackingKeyFile;

    @Option(
            names = "--router-tracking-key-id",
            paramLabel = "ID",
            description = "The key id of keyed tracking hashes: accepted, not applied.")
    String trackingKeyId;

    SelectServiceConfig config() {
        if (replicaSyncPort != null && replicaSyncPort == 0) {
            throw new IllegalArgumentException("--replica-sync-port must be between 1 and 65535");
        }
        if (sessionAffinityTtlSecs != null) {
            SessionBindings.ttlMillis(sessionAffinityTtlSecs);
        }
        return new SelectServiceConfig(
                        edge.host,
                        edge.port,
                        Math.round(selectionCacheTtlSecs * 1000),
                        selectionCacheMaxEntries,
                        selectionCacheMaxBytes,
                        10_000,
                        replicaSyncPort == null ? 0 : replicaSyncPort,
                        list(replicaSyncPeers),
                        edge.limits())
                .withLimits(limits.limits())
                .withSecurity(new SecurityConfig(authToken, authAll, null, null))
                .withSessionAffinityTtlSecs(sessionAffinityTtlSecs == null ? 0 : sessionAffinityTtlSecs);
    }

    ServeConfig indexer() {
        return new ServeConfig(
                "127.0.0.1",
                indexerPort,
                threads,
                1,
                List.of(),
                null,
                "default",
                "default",
                list(indexerPeers),
                false,
                0);
    }

    static List<String> list(String value) {
        return value == null
                ? List.of()
                : Arrays.stream(value.split(","))
                        .map(String::trim)
                        .filter(s -> !s.isEmpty())
                        .toList();
    }

    /** Starts the service on a node's Vert.x over that node's index; blocking until it listens. */
    public static SelectServiceVerticle deploy(IndexerNode node, SelectServiceConfig config, SelectionConfig selection)
            throws Exception {
        SelectServiceVerticle verticle = new SelectServiceVerticle(
                config,
                selection,
                new EmbeddedIndex(node),
                node.hazelcast(),
                System.nanoTime(),
                node::micrometerScrape,
                node.spans());
        node.vertx()
                .deployVerticle(verticle)
                .toCompletionStage()
                .toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
        node.showSelection(verticle::overview);
        return verticle;
    }

    @Override
    public Integer call() throws Exception {
        SelectServiceConfig settings;
        SelectionConfig selection;
        try {
            settings = config();
            selection = selection(System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println("kvindexer select-service: " + e.getMessage());
            return 2;
        }
        return run(indexer(), settings, selection);
    }

    /** Runs an embedded node and the service on it until the process is asked to stop. */
    static int run(ServeConfig indexer, SelectServiceConfig settings, SelectionConfig selection)
            throws InterruptedException {
        IndexerNode node;
        try {
            node = IndexerNode.start(indexer);
        } catch (Exception e) {
            System.err.println("kvindexer select-service: startup failed: " + e.getMessage());
            return 1;
        }
        try {
            SelectServiceVerticle service = deploy(node, settings, selection);
            LOG.info("selection service listening on http://{}:{}", settings.host(), service.actualPort());
        } catch (Exception e) {
            System.err.println("kvindexer select-service: startup failed: " + e.getMessage());
            node.close();
            return 1;
        }
        UntilShutdown.await("select-service-shutdown", node::close, IndexerNode.CLOSE_BUDGET.plusSeconds(5));
        return 0;
    }

    /**
     * The selection settings of {@code env} (the process environment, or a test's) with this command line's
     * overrides; a tracking hash other than the public one is accepted and reported once as not applied.
     */
    SelectionConfig selection(Map<String, String> env) {
        if (trackingHash != null
                && !PUBLIC_TRACKING_HASH.equals(trackingHash)
                && !KEYED_TRACKING_HASH.equals(trackingHash)) {
            throw new IllegalArgumentException("--router-tracking-hash must be " + PUBLIC_TRACKING_HASH + " or "
                    + KEYED_TRACKING_HASH + ", got `" + trackingHash + "`");
        }
        if (KEYED_TRACKING_HASH.equals(trackingHash) || trackingKeyFile != null || trackingKeyId != null) {
            NotApplied.report(
                    "keyed tracking hashes (--router-tracking-hash " + KEYED_TRACKING_HASH + ")",
                    "sequence hashes derived from token_ids are " + PUBLIC_TRACKING_HASH
                            + "; hashes a request sends are used as given");
        }
        Map<String, String> withFlags = new HashMap<>(env);
        if (assumeKvReuse != null) {
            withFlags.put("DYN_ROUTER_ASSUME_KV_REUSE", assumeKvReuse.toString());
        }
        return SelectionConfig.fromEnvironment(withFlags);
    }
}
