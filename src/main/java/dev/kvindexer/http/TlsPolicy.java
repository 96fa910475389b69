package dev.kvindexer.http;

import dev.kvindexer.config.SecuritySettings;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;

/** What HTTPS offers: the certificate and key of --tls-cert and --tls-key. */
final class TlsPolicy {
    private TlsPolicy() {
    }

    /** HTTPS from the PEM files of {@code security}, when it names them. */
    static void apply(HttpServerOptions options, SecuritySettings security) {
        if (!security.tls()) {
            return;
        }
        options.setSsl(true).setKeyCertOptions(new PemKeyCertOptions()
                .setCertPath(security.tlsCert().toString()).setKeyPath(security.tlsKey().toString()));
    }
}
