package dev.kvindexer.recovery;

import dev.kvindexer.config.RecoveryConfig;
import dev.kvindexer.dump.DumpParser;
import dev.kvindexer.dump.SnapshotReader;
import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.event.PartitionKey;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/**
 * Asks a peer for its {@code /dump} and parses the whole answer, within the recovery limits, before anyone uses it: a
 * peer that fails half-way leaves nothing behind. Blocking.
 */
final class PeerDumps {
    static final Duration DUMP_TIMEOUT = Duration.ofSeconds(10);

    /** The peer answered, but has nothing of what was asked: it does not serve it (404) or has no exact snapshot. */
    static final class NotHeld extends IOException {
        NotHeld(String message) {
            super(message);
        }
    }

    private final String authToken;
    private final RecoveryConfig limits;
    /**
     * Built at the first fetch: the JDK client loads a few hundred classes, sets up TLS and starts a selector thread,
     * which a node that never recovers from a peer does not need.
     */
    private volatile HttpClient client;

    /** {@code authToken}: this node's bearer token, sent to peers (a cluster shares one), or null. */
    PeerDumps(String authToken, RecoveryConfig limits) {
        this.authToken = authToken;
        this.limits = limits;
    }

    /**
     * HTTP/1.1: the JDK client's default HTTP/2 starts every cleartext connection with an h2c upgrade, a path with a
     * history of stalls on both sides, and what a peer serves here is one long body anyway.
     */
    private HttpClient client() {
        HttpClient c = client;
        if (c == null) {
            synchronized (this) {
                c = client;
                if (c == null) {
                    client = c = HttpClient.newBuilder()
                            .version(HttpClient.Version.HTTP_1_1)
                            .connectTimeout(DUMP_TIMEOUT)
                            .build();
                }
            }
        }
        return c;
    }

    /**
     * {@code url}'s dump, partition by partition; {@code query} is appended to {@code /dump} as it is. A kvindexer peer
     * answers with its binary snapshot; a Dynamo peer knows no such type and sends its JSON, which only
     * {@code snapshotOnly} refuses (as {@link NotHeld}).
     */
    Map<PartitionKey, SnapshotCollector.Collected> fetch(String url, String query, boolean snapshotOnly)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url.replaceAll("/+$", "") + "/dump" + query))
                .timeout(DUMP_TIMEOUT)
                .header("Accept", SnapshotWriter.MEDIA_TYPE + (snapshotOnly ? "" : ", application/json;q=0.5"))
                .GET();
        if (authToken != null) {
            request.header("Authorization", "Bearer " + authToken);
        }
        HttpResponse<InputStream> response = client().send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        try (LimitedStream in = new LimitedStream(response.body(), limits)) {
            if (response.statusCode() == 404 && snapshotOnly) {
                throw new NotHeld("status 404");
            }
            if (response.statusCode() / 100 != 2) {
                throw new IOException("status " + response.statusCode());
            }
            boolean binary = SnapshotWriter.acceptedBy(
                    response.headers().firstValue("content-type").orElse(null));
            if (snapshotOnly && !binary) {
                throw new NotHeld("no exact snapshot (content-type "
                        + response.headers().firstValue("content-type").orElse("none") + ")");
            }
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
