package dev.kvindexer.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.HttpConfig;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the connection deadlines keep of answered requests. A router's end handlers replace the one the deadlines set,
 * so an answered request must be let go when its connection's next one begins: held until the sweep, each request
 * kept its body and routing context alive for up to a second, and a busy server promoted them all to the old
 * generation.
 */
class ConnectionDeadlinesTest {
    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void answeredRequestsAreNotKeptUntilTheSweep() throws Exception {
        Context context = vertx.getOrCreateContext();
        ConnectionDeadlines[] deadlines = {null};
        Promise<HttpServer> listening = Promise.promise();
        context.runOnContext(v -> {
            // A sweep that never comes during the test: only what requests do themselves lets go of them.
            deadlines[0] = new ConnectionDeadlines(vertx, HttpConfig.ofSeconds(3600, 3600), 3_600_000);
            Router router = Router.router(vertx);
            router.get("/ok").handler(ctx -> {
                ctx.addEndHandler(ar -> {}); // as the request metrics do: replaces the response's end handler
                ctx.response().end("ok");
            });
            vertx.createHttpServer()
                    .connectionHandler(deadlines[0]::opened)
                    .requestHandler(request -> {
                        deadlines[0].began(request);
                        router.handle(request);
                    })
                    .listen(0, "127.0.0.1")
                    .onComplete(listening);
        });
        int port = listening
                .future()
                .toCompletionStage()
                .toCompletableFuture()
                .get(30, TimeUnit.SECONDS)
                .actualPort();

        HttpClient client =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/ok"))
                .build();
        for (int i = 0; i < 100; i++) {
            assertEquals(
                    200, client.send(get, HttpResponse.BodyHandlers.ofString()).statusCode());
        }
        Promise<Integer> held = Promise.promise();
        context.runOnContext(v -> held.complete(deadlines[0].held()));
        int kept = held.future().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        // The client may open a second connection; each keeps at most its last answered request.
        assertTrue(kept <= 2, kept + " of 100 answered requests still held");
    }
}
