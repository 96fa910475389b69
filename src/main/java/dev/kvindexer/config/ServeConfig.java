package dev.kvindexer.config;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Settings of the {@code serve} command.
 *
 * @param host          HTTP bind address
 * @param port          HTTP port; 0 picks a free one (tests)
 * @param threads       event-loop threads hosting partitions and HTTP
 * @param ingestThreads ZMQ poller threads shared by all listeners
 * @param blockSize     block size of the {@code workers} registrations (required with them)
 * @param testEndpoints mount POST /test/pause_listener and /test/resume_listener
 * @param minInitialWorkers DYN_ROUTER_MIN_INITIAL_WORKERS: the ready gate waits for this many registered instances
 * @param cluster       how to join a Hazelcast cluster, or null for a standalone node
 * @param accessLog     where to write the access log, or null for none
 * @param security      bearer token and TLS
 * @param http          idle and request timeouts of HTTP connections
 * @param maxEventBytes largest ZMQ message taken from a publisher; a larger one is a decode error and its connection
 *                      is dropped before the message is buffered
 * @param compat        deliberate departures from the newest reference clients
 * @param recovery      how large and how slow a peer's dump may be before recovery gives it up
 * @param indexMemory   the heap all partitions' indexes may hold together before they evict
 * @param maxListeners  the most listeners (engine connections) the node runs; 0 derives it from the process's
 *                      file-descriptor limit
 * @param durability    the data directory and what becomes of streams the index holds inexactly
 * @param network       the bytes all ports may hold for their peers, and the deadline of a message under way
 * @param tracing       OpenTelemetry settings ({@code otel.*}) under the process's {@code OTEL_*} environment and
 *                      system properties, which turn tracing on (tests name theirs here); empty: those alone
 */
public record ServeConfig(
        String host,
        int port,
        int threads,
        int ingestThreads,
        List<WorkerSpec> workers,
        Integer blockSize,
        String modelName,
        String routingGroup,
        List<String> peers,
        boolean testEndpoints,
        int minInitialWorkers,
        ClusterConfig cluster,
        AccessLogConfig accessLog,
        SecurityConfig security,
        HttpConfig http,
        long maxEventBytes,
        ClientCompat compat,
        RecoveryConfig recovery,
        IndexMemory indexMemory,
        int maxListeners,
        DurabilityConfig durability,
        NetworkConfig network,
        Map<String, String> tracing) {
    public static final int DEFAULT_PORT = 8090;
    public static final long DEFAULT_MAX_EVENT_BYTES = 64L * 1024 * 1024;

    /** A standalone node. */
    public ServeConfig(
            String host,
            int port,
            int threads,
            int ingestThreads,
            List<WorkerSpec> workers,
            Integer blockSize,
            String modelName,
            String routingGroup,
            List<String> peers,
            boolean testEndpoints,
            int minInitialWorkers) {
        this(
                host,
                port,
                threads,
                ingestThreads,
                workers,
                blockSize,
                modelName,
                routingGroup,
                peers,
                testEndpoints,
                minInitialWorkers,
                null,
                null,
                SecurityConfig.NONE,
                HttpConfig.DEFAULT,
                DEFAULT_MAX_EVENT_BYTES,
                ClientCompat.NEWEST,
                RecoveryConfig.DEFAULT,
                null,
                0,
                DurabilityConfig.IN_MEMORY,
                null,
                Map.of());
    }

    public ServeConfig withCluster(ClusterConfig settings) {
        return with(c -> c.cluster = settings);
    }

    public ServeConfig withAccessLog(AccessLogConfig settings) {
        return with(c -> c.accessLog = settings);
    }

    public ServeConfig withSecurity(SecurityConfig settings) {
        return with(c -> c.security = settings);
    }

    public ServeConfig withHttp(HttpConfig limits) {
        return with(c -> c.http = limits);
    }

    public ServeConfig withPeers(List<String> urls) {
        return with(c -> c.peers = urls);
    }

    public ServeConfig withMaxEventBytes(long bytes) {
        return with(c -> c.maxEventBytes = bytes);
    }

    public ServeConfig withCompat(ClientCompat settings) {
        return with(c -> c.compat = settings);
    }

    public ServeConfig withRecovery(RecoveryConfig limits) {
        return with(c -> c.recovery = limits);
    }

    public ServeConfig withIndexMemory(IndexMemory memory) {
        return with(c -> c.indexMemory = memory);
    }

    public ServeConfig withMaxListeners(int listeners) {
        return with(c -> c.maxListeners = listeners);
    }

    public ServeConfig withDurability(DurabilityConfig settings) {
        return with(c -> c.durability = settings);
    }

    public ServeConfig withNetwork(NetworkConfig limits) {
        return with(c -> c.network = limits);
    }

    public ServeConfig withTracing(Map<String, String> settings) {
        return with(c -> c.tracing = settings);
    }

    public boolean clustered() {
        return cluster != null;
    }

    /** DYN_ROUTER_MIN_INITIAL_WORKERS: unset or empty is 0; anything but a non-negative integer is a startup error. */
    public static int minInitialWorkers(String value) {
        if (value == null || value.isBlank()) {
            return 0;
        }
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(
                "DYN_ROUTER_MIN_INITIAL_WORKERS must be a non-negative integer, got `" + value + "`");
    }

    /** DYN_KV_INDEXER_TEST_ENDPOINTS: {@code 1}, {@code true}, {@code yes} or {@code on} mount the test routes. */
    public static boolean truthy(String value) {
        if (value == null) {
            return false;
        }
        String v = value.trim().toLowerCase(java.util.Locale.ROOT);
        return v.equals("1") || v.equals("true") || v.equals("yes") || v.equals("on");
    }

    public ServeConfig {
        workers = List.copyOf(workers);
        security = security == null ? SecurityConfig.NONE : security;
        http = http == null ? HttpConfig.DEFAULT : http;
        recovery = recovery == null ? RecoveryConfig.DEFAULT : recovery;
        indexMemory = indexMemory == null ? IndexMemory.defaults() : indexMemory;
        durability = durability == null ? DurabilityConfig.IN_MEMORY : durability;
        network = network == null ? NetworkConfig.defaults() : network;
        tracing = tracing == null ? Map.of() : Map.copyOf(tracing);
        if (maxEventBytes < 1024) {
            throw new IllegalArgumentException("--max-event-bytes must be at least 1024, got " + maxEventBytes);
        }
        peers = List.copyOf(peers);
        if (!workers.isEmpty() && blockSize == null) {
            throw new IllegalArgumentException("--block-size is required when --workers is given");
        }
        if (blockSize != null && blockSize <= 0) {
            throw new IllegalArgumentException("--block-size must be positive");
        }
        if (minInitialWorkers < 0) {
            throw new IllegalArgumentException("DYN_ROUTER_MIN_INITIAL_WORKERS must be a non-negative integer");
        }
        if (maxListeners < 0) {
            throw new IllegalArgumentException("--max-listeners must be at least 1 (or 0 for the default)");
        }
        if (threads < 1 || ingestThreads < 1) {
            throw new IllegalArgumentException("--threads and --ingest-threads must be at least 1");
        }
    }

    /** Defaults for an embedded node on loopback (tests, demos). */
    public static ServeConfig local(int port) {
        return new ServeConfig("127.0.0.1", port, 2, 1, List.of(), null, "default", "default", List.of(), true, 0);
    }

    /** Every field once, for the withers: each wither names only what it changes. */
    private static final class Copy {
        private String host;
        private int port;
        private int threads;
        private int ingestThreads;
        private List<WorkerSpec> workers;
        private Integer blockSize;
        private String modelName;
        private String routingGroup;
        private List<String> peers;
        private boolean testEndpoints;
        private int minInitialWorkers;
        private ClusterConfig cluster;
        private AccessLogConfig accessLog;
        private SecurityConfig security;
        private HttpConfig http;
        private long maxEventBytes;
        private ClientCompat compat;
        private RecoveryConfig recovery;
        private IndexMemory indexMemory;
        private int maxListeners;
        private DurabilityConfig durability;
        private NetworkConfig network;
        private Map<String, String> tracing;

        private Copy(ServeConfig c) {
            host = c.host;
            port = c.port;
            threads = c.threads;
            ingestThreads = c.ingestThreads;
            workers = c.workers;
            blockSize = c.blockSize;
            modelName = c.modelName;
            routingGroup = c.routingGroup;
            peers = c.peers;
            testEndpoints = c.testEndpoints;
            minInitialWorkers = c.minInitialWorkers;
            cluster = c.cluster;
            accessLog = c.accessLog;
            security = c.security;
            http = c.http;
            maxEventBytes = c.maxEventBytes;
            compat = c.compat;
            recovery = c.recovery;
            indexMemory = c.indexMemory;
            maxListeners = c.maxListeners;
            durability = c.durability;
            network = c.network;
            tracing = c.tracing;
        }

        private ServeConfig build() {
            return new ServeConfig(
                    host,
                    port,
                    threads,
                    ingestThreads,
                    workers,
                    blockSize,
                    modelName,
                    routingGroup,
                    peers,
                    testEndpoints,
                    minInitialWorkers,
                    cluster,
                    accessLog,
                    security,
                    http,
                    maxEventBytes,
                    compat,
                    recovery,
                    indexMemory,
                    maxListeners,
                    durability,
                    network,
                    tracing);
        }
    }

    /** These settings with {@code change} made to a copy of them. */
    private ServeConfig with(Consumer<Copy> change) {
        Copy c = new Copy(this);
        change.accept(c);
        return c.build();
    }
}
