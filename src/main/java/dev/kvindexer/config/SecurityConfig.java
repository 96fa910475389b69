package dev.kvindexer.config;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Who may call what, and over which transport.
 *
 * @param authToken the bearer token that mutating and admin routes require, or null for no authentication
 * @param authAll   require the token on every route, reads and probes included
 * @param tlsCert   PEM certificate chain for HTTPS, or null for plain HTTP
 * @param tlsKey    PEM private key of {@code tlsCert}
 */
public record SecurityConfig(String authToken, boolean authAll, Path tlsCert, Path tlsKey) {
    public static final SecurityConfig NONE = new SecurityConfig(null, false, null, null);

    public SecurityConfig {
        if (authToken != null && authToken.isBlank()) {
            throw new IllegalArgumentException("--auth-token must not be blank");
        }
        if (authAll && authToken == null) {
            throw new IllegalArgumentException("--auth-all needs --auth-token");
        }
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new IllegalArgumentException("--tls-cert and --tls-key go together");
        }
        for (Path p : new Path[] {tlsCert, tlsKey}) {
            if (p != null && !Files.isReadable(p)) {
                throw new IllegalArgumentException("cannot read " + p);
            }
        }
    }

    public boolean tls() {
        return tlsCert != null;
    }
}
