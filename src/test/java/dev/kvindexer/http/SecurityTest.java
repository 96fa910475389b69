package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.HttpJson;
import io.vertx.core.json.JsonObject;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;

/** The bearer token, --auth-all, body limits on every route, and TLS. */
class SecurityTest {
    private static final String TOKEN = "s3cret-token";
    private static final String REGISTER =
            "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"m\"," + "\"block_size\":4}";
    private static final String QUERY = "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4]}";

    private static IndexerNode start(SecurityConfig security) throws Exception {
        return IndexerNode.start(ServeConfig.local(0).withSecurity(security));
    }

    private static void assertUnauthorized(HttpResponse<String> r) {
        assertEquals(401, r.statusCode(), r.body());
        assertTrue(new JsonObject(r.body()).getString("error").contains("token"), r.body());
        assertEquals(
                "Bearer realm=\"kvindexer\"",
                r.headers().firstValue("www-authenticate").orElse(""));
    }

    @Test
    void theTokenGuardsMutatingAndAdminRoutesWhileQueriesAndProbesStayOpen() throws Exception {
        IndexerNode node = start(new SecurityConfig(TOKEN, false, null, null));
        try {
            HttpJson anonymous = new HttpJson(node.httpPort());
            HttpJson wrong = anonymous.withHeader("Authorization", "Bearer guess");
            HttpJson admin = anonymous.withHeader("Authorization", "Bearer " + TOKEN);

            assertUnauthorized(anonymous.post("/register", REGISTER));
            assertUnauthorized(wrong.post("/register", REGISTER));
            assertUnauthorized(anonymous.post("/register", REGISTER, "text/plain")); // 401 before 415
            assertUnauthorized(anonymous.post("/register/", REGISTER)); // no way round by a slash
            assertEquals("[]", anonymous.get("/workers").body(), "a refused request changes nothing");
            for (String path : List.of(
                    "/unregister",
                    "/events",
                    "/register_peer",
                    "/deregister_peer",
                    "/reopen_logs",
                    "/test/pause_listener",
                    "/test/resume_listener")) {
                assertUnauthorized(anonymous.post(path, "{}"));
            }

            assertEquals(201, admin.post("/register", REGISTER).statusCode());
            assertEquals(
                    201,
                    anonymous
                            .withHeader("Authorization", "bearer " + TOKEN)
                            .post("/register", REGISTER.replace("\"instance_id\":1", "\"instance_id\":2"))
                            .statusCode(),
                    "the scheme is case-blind");
            assertEquals(200, anonymous.post("/query", QUERY).statusCode());
            assertEquals(
                    200,
                    anonymous
                            .post("/query_by_hash", "{\"model_name\":\"m\",\"block_hashes\":[1]}")
                            .statusCode());
            for (String path : List.of("/health", "/ready", "/metrics", "/workers", "/dump", "/openapi.json")) {
                assertEquals(200, anonymous.get(path).statusCode(), path);
            }
            assertTrue(
                    anonymous
                            .get("/metrics")
                            .body()
                            .contains("dynamo_kvindexer_errors_total{endpoint=\"/register\",status_class=\"4xx\"}"),
                    "401s are counted");
        } finally {
            node.close();
        }
    }

    @Test
    void authAllGuardsEveryRoute() throws Exception {
        IndexerNode node = start(new SecurityConfig(TOKEN, true, null, null));
        try {
            HttpJson anonymous = new HttpJson(node.httpPort());
            HttpJson admin = anonymous.withHeader("Authorization", "Bearer " + TOKEN);
            assertUnauthorized(anonymous.post("/query", QUERY));
            for (String path : List.of("/health", "/ready", "/metrics", "/workers", "/dump", "/no-such-route")) {
                assertUnauthorized(anonymous.get(path));
            }
            assertEquals(201, admin.post("/register", REGISTER).statusCode());
            assertEquals(200, admin.post("/query", QUERY).statusCode());
            assertEquals(200, admin.get("/health").statusCode());
        } finally {
            node.close();
        }
    }

    @Test
    void everyRouteHasABodyLimit() throws Exception {
        IndexerNode node = start(SecurityConfig.NONE);
        try {
            HttpJson http = new HttpJson(node.httpPort());
            String big = "x".repeat(3 * 1024 * 1024);
            for (String path : List.of("/health", "/workers", "/metrics", "/dump")) {
                assertEquals(413, http.send("GET", path, big).statusCode(), path);
            }
            assertEquals(413, http.post("/reopen_logs", big, "text/plain").statusCode());
            assertEquals(
                    413,
                    http.post("/register_peer", "{\"url\":\"" + big + "\"}").statusCode());
            assertEquals(200, http.get("/health").statusCode(), "the node is fine");
        } finally {
            node.close();
        }
    }

    @Test
    void tlsServesHttpsFromPemFiles() throws Exception {
        Path cert = resource("tls/test-cert.pem");
        Path key = resource("tls/test-key.pem");
        IndexerNode node = start(new SecurityConfig(null, false, cert, key));
        try {
            HttpJson https = HttpJson.https(node.httpPort(), trusting(cert));
            assertEquals(200, https.get("/health").statusCode());
            assertEquals(201, https.post("/register", REGISTER).statusCode());
            assertThrows(
                    AssertionError.class,
                    () -> new HttpJson(node.httpPort()).get("/health"),
                    "plain HTTP gets no answer from a TLS port");
        } finally {
            node.close();
        }
    }

    @Test
    void tlsOffersOnlyForwardSecretSuitesOnTls12And13() throws Exception {
        Path cert = resource("tls/test-cert.pem");
        IndexerNode node = start(new SecurityConfig(null, false, cert, resource("tls/test-key.pem")));
        try {
            SSLContext trust = trusting(cert);
            int port = node.httpPort();
            for (String staticKeyOrCbc : List.of(
                    "TLS_RSA_WITH_AES_128_GCM_SHA256",
                    "TLS_RSA_WITH_AES_256_CBC_SHA",
                    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256")) {
                SSLHandshakeException refused = assertThrows(
                        SSLHandshakeException.class,
                        () -> handshake(trust, port, "TLSv1.2", staticKeyOrCbc),
                        staticKeyOrCbc);
                // The server's alert, not the client's own refusal to offer the suite.
                assertTrue(refused.getMessage().contains("Received fatal alert"), staticKeyOrCbc + ": " + refused);
            }
            for (String forwardSecret : List.of(
                    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
                    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
                    "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256")) {
                assertEquals(forwardSecret, handshake(trust, port, "TLSv1.2", forwardSecret));
            }
            assertEquals("TLS_AES_128_GCM_SHA256", handshake(trust, port, "TLSv1.3", "TLS_AES_128_GCM_SHA256"));
        } finally {
            node.close();
        }
    }

    /** A handshake offering only {@code suite} over {@code protocol}; the suite agreed on. */
    private static String handshake(SSLContext trust, int port, String protocol, String suite) throws Exception {
        try (SSLSocket socket = (SSLSocket) trust.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            socket.setEnabledProtocols(new String[] {protocol});
            socket.setEnabledCipherSuites(new String[] {suite});
            socket.startHandshake();
            return socket.getSession().getCipherSuite();
        }
    }

    @Test
    void securitySettingsRefuseHalfConfigurations() {
        assertThrows(IllegalArgumentException.class, () -> new SecurityConfig(" ", false, null, null));
        assertThrows(IllegalArgumentException.class, () -> new SecurityConfig(null, true, null, null));
        assertThrows(IllegalArgumentException.class, () -> new SecurityConfig(null, false, Path.of("c.pem"), null));
        assertThrows(
                IllegalArgumentException.class,
                () -> new SecurityConfig(null, false, Path.of("/no/such/cert.pem"), Path.of("/no/such/key.pem")));
    }

    private static Path resource(String name) throws URISyntaxException {
        return Path.of(SecurityTest.class.getResource("/" + name).toURI());
    }

    private static SSLContext trusting(Path certPem) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = java.nio.file.Files.newInputStream(certPem)) {
            trust.setCertificateEntry(
                    "test", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }
}
