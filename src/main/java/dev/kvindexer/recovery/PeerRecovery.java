package dev.kvindexer.recovery;

import dev.kvindexer.config.RecoveryLimits;
import dev.kvindexer.dump.DumpParser;
import dev.kvindexer.dump.SnapshotReader;
import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.registry.LocalRegistrar;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Startup recovery (docs/protocol/recovery.md#recovery-algorithm): GET /dump from the first reachable peer and load it
 * into the partitions. A Dynamo
 * peer's JSON dump is loaded the Dynamo way; a kvindexer peer answers with its binary snapshot (SnapshotFormat),
 * which carries watermarks and reference counts and is installed exactly (DESIGN "Exact recovery"). A peer's dump is parsed completely before anything is applied, so a
 * peer that fails half-way leaves nothing behind for the next one to duplicate. Blocking; runs on the starting thread.
 */
public final class PeerRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(PeerRecovery.class);
    static final Duration DUMP_TIMEOUT = Duration.ofSeconds(10);

    private final SnapshotInstaller installer;
    private final String authToken;
    private final RecoveryLimits limits;
    /**
     * HTTP/1.1: the JDK client's default HTTP/2 starts every cleartext connection with an h2c upgrade, a path with a
     * history of stalls on both sides, and what a peer serves here is one long body anyway.
     */
    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(DUMP_TIMEOUT)
            .build();

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
            RecoveryLimits limits) {
        this.limits = limits;
        this.installer = new SnapshotInstaller(registrations, fallbackBlockSize, registered, false);
        this.authToken = authToken;
    }

    /** Recovers from the first peer that answers with a parsable dump; reports which peer and what it loaded. */
    public RecoveryReport recover(List<String> peers) throws InterruptedException {
        long started = System.nanoTime();
        for (String url : peers) {
            Map<PartitionKey, SnapshotCollector.Collected> dump;
            try {
                dump = fetch(url);
            } catch (IOException e) {
                LOG.warn(
                        "peer {} gave no usable dump: {}", url, e.getMessage() != null ? e.getMessage() : e.toString());
                continue;
            }
            long events = 0;
            boolean exact = true;
            for (Map.Entry<PartitionKey, SnapshotCollector.Collected> e : dump.entrySet()) {
                events += installer.install(e.getKey(), e.getValue());
                exact &= e.getValue().exact;
            }
            RecoveryReport report =
                    new RecoveryReport(url, dump.size(), events, exact, (System.nanoTime() - started) / 1_000_000);
            LOG.info(
                    "recovered {} partitions and {} events from peer {} ({}, {} ms)",
                    report.partitions(),
                    report.events(),
                    url,
                    exact ? "exact snapshot" : "Dynamo dump",
                    report.millis());
            return report;
        }
        LOG.warn("no peer reachable for recovery; starting with an empty index");
        return RecoveryReport.NONE;
    }

    private Map<PartitionKey, SnapshotCollector.Collected> fetch(String url) throws IOException, InterruptedException {
        // A kvindexer peer answers with its binary snapshot; a Dynamo peer knows no such type and sends its JSON.
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url.replaceAll("/+$", "") + "/dump"))
                .timeout(DUMP_TIMEOUT)
                .header("Accept", SnapshotWriter.MEDIA_TYPE + ", application/json;q=0.5")
                .GET();
        if (authToken != null) {
            request.header("Authorization", "Bearer " + authToken);
        }
        HttpResponse<InputStream> response = client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        try (LimitedStream in = new LimitedStream(response.body(), limits)) {
            if (response.statusCode() / 100 != 2) {
                throw new IOException("status " + response.statusCode());
            }
            boolean binary = SnapshotWriter.acceptedBy(
                    response.headers().firstValue("content-type").orElse(null));
            SnapshotCollector collector = new SnapshotCollector(url);
            try {
                if (binary) {
                    SnapshotReader.read(in, limits.maxBytes(), collector);
                } else {
                    DumpParser.parse(in, collector);
                }
            } catch (IOException e) {
                throw in.explain(e);
            }
            return collector.partitions();
        }
    }
}
