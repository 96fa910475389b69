package dev.kvindexer.cli;

import dev.kvindexer.IndexerNode;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.config.WorkerSpec;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code serve}: runs the indexer with Dynamo's flags (SPEC §7.12). */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Run the KV indexer HTTP service (Dynamo standalone indexer compatible).")
public final class ServeCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);

    @Option(names = "--host", defaultValue = "0.0.0.0", description = "HTTP bind address (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", defaultValue = "8090", description = "HTTP port (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--threads", defaultValue = "4",
            description = "Event-loop threads hosting partitions and HTTP (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--ingest-threads", defaultValue = "2",
            description = "ZMQ poller threads shared by all listeners (default: ${DEFAULT-VALUE}).")
    int ingestThreads;

    @Option(names = "--block-size", description = "Block size of the --workers registrations (required with --workers).")
    Integer blockSize;

    @Option(names = "--workers", description = "Initial registrations: instance_id[:dp_rank]=endpoint,...")
    String workers;

    @Option(names = "--model-name", defaultValue = "default", description = "Model of the --workers (default: ${DEFAULT-VALUE}).")
    String modelName;

    @Option(names = "--tenant-id", defaultValue = "default", description = "Tenant of the --workers (default: ${DEFAULT-VALUE}).")
    String tenantId;

    @Option(names = "--routing-group", description = "Group of the --workers; wins over --tenant-id.")
    String routingGroup;

    @Option(names = "--peers", description = "Comma-separated peer indexer URLs for startup recovery.")
    String peers;

    ServeConfig config() {
        List<String> peerList = peers == null ? List.of()
                : Arrays.stream(peers.split(",")).map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toList());
        return new ServeConfig(host, port, threads, ingestThreads, WorkerSpec.parseList(workers), blockSize, modelName,
                routingGroup != null ? routingGroup : tenantId, peerList,
                ServeConfig.truthy(System.getenv("DYN_KV_INDEXER_TEST_ENDPOINTS")),
                ServeConfig.minInitialWorkers(System.getenv("DYN_ROUTER_MIN_INITIAL_WORKERS")));
    }

    @Override
    public Integer call() throws Exception {
        ServeConfig config;
        try {
            config = config();
        } catch (IllegalArgumentException e) {
            System.err.println("kvindexer serve: " + e.getMessage());
            return 2;
        }
        IndexerNode node;
        try {
            node = IndexerNode.start(config);
        } catch (Exception e) {
            System.err.println("kvindexer serve: startup failed: " + e.getMessage());
            return 1;
        }
        LOG.info("kvindexer listening on http://{}:{}", config.host(), node.httpPort());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            node.close();
            stopped.countDown();
        }, "kvindexer-shutdown"));
        stopped.await();
        return 0;
    }
}
