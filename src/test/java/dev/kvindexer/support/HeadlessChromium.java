package dev.kvindexer.support;

import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real headless Chromium driven over the DevTools protocol (a WebSocket), for tests that load our pages as a person
 * would: navigate, type, click, read the rendered DOM, take a screenshot. No driver or browser download: it runs the
 * system's {@code chromium} (Debian's package), which {@code .ci/run} installs.
 */
public final class HeadlessChromium implements AutoCloseable {
    private static final List<String> CANDIDATES = List.of(
            "/usr/bin/chromium",
            "/usr/bin/chromium-browser",
            "/usr/bin/google-chrome",
            "/usr/bin/google-chrome-stable");
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);

    private final Process process;
    private final Path profile;
    private final Vertx vertx;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonObject>> pending = new ConcurrentHashMap<>();

    /** The browser's executable: {@code KVINDEXER_CHROMIUM}, else the first of the usual paths; null when none is. */
    public static Path executable() {
        String configured = System.getenv("KVINDEXER_CHROMIUM");
        List<String> paths = configured != null && !configured.isBlank() ? List.of(configured) : CANDIDATES;
        return paths.stream()
                .map(Path::of)
                .filter(Files::isExecutable)
                .findFirst()
                .orElse(null);
    }

    private HeadlessChromium(Process process, Path profile, Vertx vertx, WebSocket socket) {
        this.process = process;
        this.profile = profile;
        this.vertx = vertx;
        this.socket = socket;
        socket.textMessageHandler(text -> {
            JsonObject message = new JsonObject(text);
            Integer id = message.getInteger("id");
            CompletableFuture<JsonObject> waiter = id == null ? null : pending.remove(id);
            if (waiter != null) {
                waiter.complete(message);
            }
        });
        socket.closeHandler(v -> pending.values()
                .forEach(f -> f.completeExceptionally(new IOException("the browser closed its DevTools connection"))));
    }

    /** Starts the browser with a fresh profile and one blank page of {@code width} × {@code height}. */
    public static HeadlessChromium launch(Path executable, int width, int height) throws Exception {
        Path profile = Files.createTempDirectory("kvindexer-chromium");
        // The flags that keep it off the network (this machine's is closed) and out of first-run and sync. The
        // DevTools socket refuses a handshake that carries an Origin; ours sends none (see connect below).
        Process process = new ProcessBuilder(
                        executable.toString(),
                        "--headless",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--disable-quic",
                        "--no-first-run",
                        "--disable-background-networking",
                        "--disable-component-update",
                        "--disable-sync",
                        "--disable-extensions",
                        "--remote-debugging-address=127.0.0.1",
                        "--remote-debugging-port=0",
                        "--user-data-dir=" + profile,
                        "--window-size=" + width + "," + height,
                        "about:blank")
                .redirectErrorStream(true)
                .redirectOutput(profile.resolve("chromium.log").toFile())
                .start();
        Vertx vertx = Vertx.vertx();
        try {
            Path portFile = profile.resolve("DevToolsActivePort");
            Await.until(
                    "Chromium's DevTools port (its log: " + profile.resolve("chromium.log") + ")",
                    Duration.ofSeconds(30),
                    () -> {
                        try {
                            return Files.exists(portFile)
                                    && Files.readAllLines(portFile).size() >= 2;
                        } catch (IOException partlyWritten) {
                            return false;
                        }
                    });
            int port = Integer.parseInt(Files.readAllLines(portFile).get(0).trim());
            String page = pageSocket(port);
            WebSocketClient client = vertx.createWebSocketClient(new WebSocketClientOptions()
                    .setMaxFrameSize(64 * 1024 * 1024)
                    .setMaxMessageSize(64 * 1024 * 1024));
            URI uri = URI.create(page);
            WebSocket socket = client.connect(new WebSocketConnectOptions()
                            .setHost("127.0.0.1")
                            .setPort(port)
                            .setURI(uri.getPath())
                            .setAllowOriginHeader(false))
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(30, TimeUnit.SECONDS);
            HeadlessChromium browser = new HeadlessChromium(process, profile, vertx, socket);
            browser.command(
                    "Emulation.setDeviceMetricsOverride",
                    new JsonObject()
                            .put("width", width)
                            .put("height", height)
                            .put("deviceScaleFactor", 1)
                            .put("mobile", false));
            return browser;
        } catch (Exception e) {
            process.destroy();
            stop(process, vertx, profile);
            throw e;
        }
    }

    /** The DevTools WebSocket of the browser's first page. */
    private static String pageSocket(int port) throws Exception {
        HttpClient http =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpResponse<String> list = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list"))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        for (Object target : new JsonArray(list.body())) {
            JsonObject t = (JsonObject) target;
            if ("page".equals(t.getString("type"))) {
                return t.getString("webSocketDebuggerUrl");
            }
        }
        throw new IOException("no page target in " + list.body());
    }

    /** Sends one DevTools command and returns its result; a protocol error fails the test with its message. */
    public JsonObject command(String method, JsonObject params) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonObject> answer = new CompletableFuture<>();
        pending.put(id, answer);
        socket.writeTextMessage(new JsonObject()
                .put("id", id)
                .put("method", method)
                .put("params", params)
                .encode());
        JsonObject message;
        try {
            message = answer.get(COMMAND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            pending.remove(id);
        }
        if (message.containsKey("error")) {
            throw new IllegalStateException(
                    method + " failed: " + message.getJsonObject("error").encode());
        }
        return message.getJsonObject("result");
    }

    public void navigate(String url) throws Exception {
        JsonObject result = command("Page.navigate", new JsonObject().put("url", url));
        if (result.getString("errorText") != null) {
            throw new IOException("navigation to " + url + " failed: " + result.getString("errorText"));
        }
    }

    /**
     * The value of a JavaScript expression in the page (awaited when it is a promise), as JSON: a string, number,
     * boolean, null, or an object or array built of those. A thrown exception fails with its description.
     */
    public Object evaluate(String expression) throws Exception {
        JsonObject result = command(
                "Runtime.evaluate",
                new JsonObject()
                        .put("expression", expression)
                        .put("returnByValue", true)
                        .put("awaitPromise", true));
        JsonObject thrown = result.getJsonObject("exceptionDetails");
        if (thrown != null) {
            JsonObject exception = thrown.getJsonObject("exception");
            throw new IllegalStateException("page script failed: "
                    + (exception != null ? exception.getString("description") : thrown.getString("text")));
        }
        return result.getJsonObject("result").getValue("value");
    }

    /** Waits until {@code expression} is true in the page. */
    public void waitFor(String expression, Duration timeout) {
        Await.until("the page to satisfy " + expression, timeout, () -> {
            try {
                return Boolean.TRUE.equals(evaluate(expression));
            } catch (Exception notYet) {
                return false;
            }
        });
    }

    /** The page as a PNG of the viewport. */
    public byte[] screenshot() throws Exception {
        String data = command(
                        "Page.captureScreenshot",
                        new JsonObject().put("format", "png").put("captureBeyondViewport", false))
                .getString("data");
        return Base64.getDecoder().decode(data);
    }

    @Override
    public void close() {
        try {
            command("Browser.close", new JsonObject());
        } catch (Exception ignored) {
            // It is going away anyway.
        }
        stop(process, vertx, profile);
    }

    /** Ends the browser with its renderer and GPU processes, the DevTools client, and the profile directory. */
    private static void stop(Process process, Vertx vertx, Path profile) {
        // Taken first: once the browser has exited its children are no longer its descendants.
        List<ProcessHandle> children = process.descendants().toList();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        children.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception ignored) {
            // Its threads are daemons; the test goes on.
        }
        try (var files = Files.walk(profile)) {
            files.sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        } catch (IOException | java.io.UncheckedIOException ignored) {
            // A temp directory left behind is harmless (a browser process still dying may change it meanwhile).
        }
    }
}
