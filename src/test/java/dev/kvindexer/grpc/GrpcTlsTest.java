package dev.kvindexer.grpc;

import static dev.kvindexer.grpc.GrpcFixture.batch;
import static dev.kvindexer.grpc.GrpcFixture.get;
import static dev.kvindexer.grpc.GrpcFixture.report;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.grpc.v1.KVIndexerGrpcClient;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.grpc.v1.TierType;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.client.GrpcClient;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** With --tls-cert and --tls-key the gRPC port speaks HTTP/2 over TLS (ALPN h2), as the HTTP port speaks HTTPS. */
class GrpcTlsTest {
    @Test
    void theGrpcPortServesOverTlsAndNotInClearText() throws Exception {
        Path cert = resource("tls/test-cert.pem");
        Path key = resource("tls/test-key.pem");
        try (GrpcFixture g = new GrpcFixture(32, new SecurityConfig(null, false, cert, key))) {
            GrpcClient tls = GrpcClient.client(
                    g.vertx,
                    new HttpClientOptions()
                            .setSsl(true)
                            .setUseAlpn(true)
                            .setVerifyHost(false)
                            .setProtocolVersion(HttpVersion.HTTP_2)
                            .setTrustOptions(new PemTrustOptions().addCertPath(cert.toString())));
            KVIndexerGrpcClient client =
                    KVIndexerGrpcClient.create(tls, SocketAddress.inetSocketAddress(g.port, "127.0.0.1"));
            get(client.applyExternalKvBatch(batch("tls-w", "http://10.0.0.1:30000", 1, report(TierType.TIER_HBM, 5))));
            assertEquals(
                    1,
                    get(client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.newBuilder()
                                    .addHashes(5)
                                    .build()))
                            .getBestPrefixBlocks());
            // The fixture's own client speaks cleartext HTTP/2: a TLS port does not answer it.
            assertThrows(
                    Exception.class,
                    () -> get(g.client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.newBuilder()
                            .addHashes(5)
                            .build())));
        }
    }

    private static Path resource(String name) throws Exception {
        return Path.of(GrpcTlsTest.class.getResource("/" + name).toURI());
    }
}
