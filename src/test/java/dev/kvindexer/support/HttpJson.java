package dev.kvindexer.support;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLContext;

/** A minimal blocking HTTP client for tests against a real server on 127.0.0.1. */
public final class HttpJson {
    private final HttpClient client;
    private final String base;
    private final Map<String, String> headers;

    public HttpJson(int port) {
        this("http://127.0.0.1:" + port, client().build(), Map.of());
    }

    /**
     * HTTP/1.1, as routers speak to us. The JDK's default HTTP/2 opens every cleartext connection with an h2c upgrade,
     * and a test's first request to a node once hung on such a connection for the whole deadline.
     */
    private static HttpClient.Builder client() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5));
    }

    private HttpJson(String base, HttpClient client, Map<String, String> headers) {
        this.base = base;
        this.client = client;
        this.headers = headers;
    }

    /** HTTPS to 127.0.0.1, trusting what {@code trust} trusts. */
    public static HttpJson https(int port, SSLContext trust) {
        return new HttpJson(
                "https://127.0.0.1:" + port, client().sslContext(trust).build(), Map.of());
    }

    /** The same client, sending {@code name: value} with every request. */
    public HttpJson withHeader(String name, String value) {
        Map<String, String> more = new LinkedHashMap<>(headers);
        more.put(name, value);
        return new HttpJson(base, client, more);
    }

    /** The scheme, host and port requests go to. */
    public String base() {
        return base;
    }

    public HttpResponse<String> get(String path) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
    }

    public HttpResponse<String> get(String path, String accept) {
        return send(HttpRequest.newBuilder(URI.create(base + path))
                .header("Accept", accept)
                .GET());
    }

    public HttpResponse<String> post(String path, String json) {
        return post(path, json, "application/json");
    }

    public HttpResponse<String> post(String path, String body, String contentType) {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(URI.create(base + path)).POST(HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        return send(b);
    }

    /** A body of raw bytes (msgpack), answered as bytes. */
    public HttpResponse<byte[]> postBytes(String path, byte[] body, String contentType) {
        return send(
                HttpRequest.newBuilder(URI.create(base + path))
                        .header("Content-Type", contentType)
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body)),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    public HttpResponse<byte[]> getBytes(String path, String accept) {
        return send(
                HttpRequest.newBuilder(URI.create(base + path))
                        .header("Accept", accept)
                        .GET(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    public HttpResponse<String> send(String method, String path) {
        return send(
                HttpRequest.newBuilder(URI.create(base + path)).method(method, HttpRequest.BodyPublishers.noBody()));
    }

    /** A PATCH with a JSON body. */
    public HttpResponse<String> patch(String path, String json) {
        return send(HttpRequest.newBuilder(URI.create(base + path))
                .header("content-type", "application/json")
                .method("PATCH", HttpRequest.BodyPublishers.ofString(json)));
    }

    /** Any method with a body, {@code GET} included. */
    public HttpResponse<String> send(String method, String path, String body) {
        return send(HttpRequest.newBuilder(URI.create(base + path))
                .method(method, HttpRequest.BodyPublishers.ofString(body)));
    }

    /**
     * The JDK client's own request timeout was seen not to fire: a request sat on an idle, established connection for
     * 15 minutes while the server answered the same route to curl in milliseconds. So the wait has a hard deadline of
     * its own, and a stuck request fails its test instead of hanging the build.
     */
    private HttpResponse<String> send(HttpRequest.Builder b) {
        return send(b, HttpResponse.BodyHandlers.ofString());
    }

    private <T> HttpResponse<T> send(HttpRequest.Builder b, HttpResponse.BodyHandler<T> handler) {
        headers.forEach(b::header);
        HttpRequest request = b.timeout(Duration.ofSeconds(20)).build();
        CompletableFuture<HttpResponse<T>> response = client.sendAsync(request, handler);
        try {
            return response.get(25, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            response.cancel(true);
            throw new AssertionError(
                    "no response within 25 s to " + request.method() + " " + request.uri() + "; "
                            + probe(request.uri()),
                    e);
        } catch (InterruptedException e) {
            response.cancel(true);
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for a response", e);
        } catch (ExecutionException e) {
            throw new AssertionError("request failed: " + e.getCause(), e.getCause());
        }
    }

    /**
     * Whether the server answers /health meanwhile (HTTP/1.1 does not share the busy connection, so this opens another):
     * tells a stuck server from a stuck connection.
     */
    private String probe(URI stuck) {
        URI health = stuck.resolve("/health");
        long started = System.nanoTime();
        try {
            HttpResponse<String> r = client.sendAsync(
                            HttpRequest.newBuilder(health).build(), HttpResponse.BodyHandlers.ofString())
                    .get(5, TimeUnit.SECONDS);
            return "a fresh connection got " + r.statusCode() + " from /health in "
                    + (System.nanoTime() - started) / 1_000_000 + " ms";
        } catch (Exception e) {
            return "a fresh connection got nothing from /health either: " + e;
        }
    }
}
