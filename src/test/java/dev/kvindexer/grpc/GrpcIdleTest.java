package dev.kvindexer.grpc;

import static dev.kvindexer.grpc.GrpcFixture.get;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.config.GrpcConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.metrics.GrpcMetrics;
import io.vertx.core.Vertx;
import java.io.InputStream;
import java.net.Socket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A peer that connects to the gRPC port and sends nothing is let go after the idle timeout; it holds nothing. */
class GrpcIdleTest {
    @Test
    void aSilentConnectionIsClosed() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            GrpcConfig config = new GrpcConfig(
                    "127.0.0.1",
                    0,
                    GrpcConfig.DEFAULT_PREFIX_MAX_INFLIGHT,
                    "m",
                    "default",
                    GrpcConfig.DEFAULT_MAX_WORKERS,
                    GrpcConfig.DEFAULT_MAX_PLACEMENTS,
                    Duration.ofMillis(300));
            int port = get(GrpcVerticle.deploy(
                    vertx,
                    new ExternalKvService(GrpcConfig.DEFAULT_PREFIX_MAX_INFLIGHT),
                    config,
                    SecurityConfig.NONE,
                    new GrpcMetrics(),
                    dev.kvindexer.net.NetworkBudget.unbounded(),
                    1));
            try (Socket silent = new Socket("127.0.0.1", port)) {
                // Far longer than the idle timeout: only the server's close ends the read early.
                silent.setSoTimeout(60_000);
                InputStream in = silent.getInputStream();
                int read;
                do {
                    read = in.read(); // the server's own HTTP/2 preface may come first
                } while (read != -1);
                assertEquals(-1, read);
            }
        } finally {
            get(vertx.close());
        }
    }
}
