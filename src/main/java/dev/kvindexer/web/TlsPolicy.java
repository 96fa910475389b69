package dev.kvindexer.web;

import dev.kvindexer.config.SecurityConfig;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import java.util.List;
import java.util.Set;

/**
 * What HTTPS offers: TLS 1.2 and 1.3 only, with forward-secret cipher suites only (ephemeral ECDHE or DHE key
 * exchange with an AEAD cipher; every TLS 1.3 suite is one), as in Mozilla's "intermediate" server profile. A
 * recorded session then stays secret even if the server's key leaks later.
 */
public final class TlsPolicy {
    static final Set<String> PROTOCOLS = Set.of("TLSv1.2", "TLSv1.3");
    static final List<String> CIPHER_SUITES = List.of(
            "TLS_AES_128_GCM_SHA256",
            "TLS_AES_256_GCM_SHA384",
            "TLS_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
            "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384",
            "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256");

    private TlsPolicy() {}

    /** HTTPS from the PEM files of {@code security}, when it names them. */
    public static void apply(HttpServerOptions options, SecurityConfig security) {
        if (!security.tls()) {
            return;
        }
        options.setSsl(true)
                .setKeyCertOptions(new PemKeyCertOptions()
                        .setCertPath(security.tlsCert().toString())
                        .setKeyPath(security.tlsKey().toString()))
                .setEnabledSecureTransportProtocols(PROTOCOLS);
        CIPHER_SUITES.forEach(options::addEnabledCipherSuite);
    }
}
