package dev.kvindexer.ui;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kvindexer.cli.SelectServiceCommand;
import dev.kvindexer.config.DurabilityConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.sim.EngineHashKind;
import dev.kvindexer.sim.HeldBlock;
import dev.kvindexer.sim.PromptSource;
import dev.kvindexer.sim.ReplayStyle;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.Simulation;
import dev.kvindexer.sim.SimulationConfig;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.DumpBlocks;
import dev.kvindexer.support.HeadlessChromium;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dashboard as a person sees it: a node fed by simulated engines, the page loaded in a real headless Chromium, and
 * assertions on the rendered DOM: the workers with their listener states, a failed one with its error, and the query
 * playground's tier bars for a prompt the engines hold, in both API flavors. Skipped where no Chromium is installed,
 * unless {@code KVINDEXER_REQUIRE_BROWSER} is set: {@code .ci/run} installs Debian's and sets it.
 */
class DashboardBrowserTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String MODEL = "demo-model";
    private static Path chromium;
    private IndexerNode node;
    private Simulation sim;
    private HeadlessChromium browser;
    private TestPublisher engine;

    @TempDir
    Path dataDir;

    @BeforeAll
    static void findBrowser() {
        chromium = HeadlessChromium.executable();
        if (System.getenv("KVINDEXER_REQUIRE_BROWSER") != null) {
            assertNotNull(chromium, "KVINDEXER_REQUIRE_BROWSER is set and no Chromium was found");
        }
        assumeTrue(chromium != null, "no Chromium here: install Debian's chromium (.ci/run does) to run this test");
    }

    @AfterEach
    void stop() {
        if (browser != null) {
            browser.close();
        }
        if (engine != null) {
            engine.close();
        }
        if (sim != null) {
            sim.close();
        }
        if (node != null) {
            node.close();
        }
    }

    private static SimulationConfig engines(int port) {
        return new SimulationConfig(
                2,
                2,
                "127.0.0.1",
                "127.0.0.1",
                0,
                0,
                BatchEncoder.Format.VLLM_MAP,
                EngineHashKind.SEQUENCE,
                16,
                64,
                4096,
                40,
                0,
                0,
                42,
                null,
                512,
                0,
                ReplayStyle.FOUR_FRAME,
                MODEL,
                "default",
                1,
                URI.create("http://127.0.0.1:" + port),
                "",
                Duration.ZERO,
                Duration.ZERO);
    }

    @Test
    void showsTheEnginesAndAnswersAPromptInTierBarsInBothFlavors() throws Exception {
        node = IndexerNode.start(ServeConfig.local(0));
        HttpJson http = new HttpJson(node.httpPort());
        sim = Simulation.start(engines(node.httpPort()));
        sim.registerAll();
        // Batches published before a listener's subscription arrives are gone, and with nothing after them no gap
        // shows that they are missing: start sending once every rank has its subscriber.
        for (SimulatedEngine e : sim.engines()) {
            assertTrue(e.awaitSubscribers(1, WAIT), "a subscriber for " + e.endpoint());
        }
        sim.run(sim.openPrompts());
        int[] prompt;
        try (PromptSource again = sim.openPrompts()) {
            prompt = again.next();
        }
        String tokens = Arrays.stream(prompt).mapToObj(Integer::toString).collect(Collectors.joining(" "));
        String body = new JsonObject()
                .put("model_name", MODEL)
                .put("token_ids", new JsonArray(Arrays.stream(prompt).boxed().toList()))
                .encode();
        // The simulator's last batches may still be on their way: wait until the index holds what the engines hold.
        Set<HeldBlock> truth = new HashSet<>();
        for (SimulatedEngine e : sim.engines()) {
            assertTrue(e.awaitIdle(WAIT), "engine " + e.endpoint() + " idle");
            truth.addAll(e.held());
        }
        Await.until(
                "the index to hold every engine's blocks",
                WAIT,
                () -> truth.equals(DumpBlocks.parse(http.get("/dump").body(), MODEL + ":default")));
        JsonObject dynamo = new JsonObject(http.post("/query", body).body());
        assertTrue(!dynamo.getJsonObject("instances").isEmpty(), "the engines hold the first prompt: " + dynamo);
        assertEquals(
                201,
                http.post(
                                "/register",
                                "{\"instance_id\":77,\"endpoint\":\"tcp://no-such-host.invalid:5557\","
                                        + "\"model_name\":\"broken-model\",\"block_size\":16}")
                        .statusCode());

        browser = HeadlessChromium.launch(chromium, 1400, 1400);
        browser.navigate("http://127.0.0.1:" + node.httpPort() + "/");
        browser.waitFor("document.querySelectorAll('#workers tr[data-status=\"active\"]').length === 4", WAIT);
        assertEquals(
                List.of("1/0", "1/1", "2/0", "2/1"),
                rows("#workers tr[data-status=\"active\"]", "r.dataset.instance + '/' + r.dataset.rank"));
        browser.waitFor(
                "document.querySelector('#workers tr[data-instance=\"77\"]')?.dataset.status === 'failed'"
                        + " && document.querySelector('#workers td.last-error') !== null",
                WAIT);
        String error = (String) browser.evaluate("document.querySelector('#workers td.last-error').textContent");
        assertTrue(error.contains("no-such-host.invalid"), error);
        assertEquals("ready", browser.evaluate("document.getElementById('node-status').textContent"));
        // Blocks per tier come from the index: GPU and CPU columns of the first engine rank are numbers, not dashes.
        String gpuCell = (String) browser.evaluate(
                "document.querySelector('#workers tr[data-instance=\"1\"][data-rank=\"0\"]').cells[7].textContent");
        assertTrue(gpuCell.matches("\\d.*"), "GPU blocks of engine 1 rank 0: " + gpuCell);
        String endpointCell = (String) browser.evaluate(
                "document.querySelector('#workers tr[data-instance=\"1\"][data-rank=\"0\"] td.endpoint').textContent");
        String listened = http.get("/workers").body();
        assertTrue(
                endpointCell.startsWith("tcp://")
                        && listened.contains(endpointCell.split("replay ")[0]),
                "the endpoint rank 0 of engine 1 listens to: " + endpointCell);
        assertTrue(endpointCell.contains("replay tcp://"), "and its replay endpoint: " + endpointCell);
        assertEquals(
                List.of(MODEL, "broken-model").stream().sorted().toList(),
                rows("#partitions tbody tr", "r.dataset.model"));

        JsonObject expected = dynamo.getJsonObject("instances");
        askInPlayground(MODEL, "dynamo", tokens);
        for (String id : expected.fieldNames()) {
            JsonObject m = expected.getJsonObject(id);
            assertEquals(
                    List.of(m.getLong("gpu"), m.getLong("cpu"), m.getLong("disk")),
                    bars(id),
                    "instance " + id + " drawn as the Dynamo answer gives it");
        }
        assertTrue(
                (Boolean) browser.evaluate("document.querySelector('#q-result .match rect.gpu') !== null"),
                "a GPU bar is drawn");
        Files.createDirectories(Path.of("target"));
        Files.write(Path.of("target", "dashboard.png"), browser.screenshot());

        JsonObject mooncake = new JsonObject(http.post(
                                "/query?flavor=mooncake",
                                new JsonObject()
                                        .put("model", MODEL)
                                        .put(
                                                "token_ids",
                                                new JsonArray(Arrays.stream(prompt)
                                                        .boxed()
                                                        .toList()))
                                        .encode())
                        .body())
                .getJsonObject("default");
        askInPlayground(MODEL, "mooncake", tokens);
        for (String id : mooncake.fieldNames()) {
            JsonObject m = mooncake.getJsonObject(id);
            assertEquals(
                    List.of(m.getLong("GPU"), m.getLong("CPU"), m.getLong("DISK")),
                    bars(id),
                    "instance " + id + " drawn as the Mooncake answer gives it");
        }
        assertEquals(
                expected.fieldNames().stream().sorted().toList(),
                mooncake.fieldNames().stream()
                        .filter(id -> mooncake.getJsonObject(id).getLong("DISK") > 0)
                        .sorted()
                        .toList(),
                "both flavors find the same instances");
    }

    @Test
    void withAuthAllThePageAsksForTheTokenAndSendsIt() throws Exception {
        ServeConfig config = ServeConfig.local(0).withSecurity(new SecurityConfig("s3cret", true, null, null));
        node = IndexerNode.start(config);
        HttpJson http = new HttpJson(node.httpPort()).withHeader("authorization", "Bearer s3cret");
        assertEquals(
                201,
                http.post(
                                "/register",
                                "{\"instance_id\":5,\"endpoint\":\"tcp://127.0.0.1:1\","
                                        + "\"model_name\":\"m\",\"block_size\":16}")
                        .statusCode());

        browser = HeadlessChromium.launch(chromium, 1200, 900);
        browser.navigate("http://127.0.0.1:" + node.httpPort() + "/ui/");
        browser.waitFor("!document.getElementById('token-form').hidden", WAIT);
        assertEquals(
                0.0,
                ((Number) browser.evaluate("document.querySelectorAll('#workers tr[data-instance]').length"))
                        .doubleValue(),
                "nothing shown yet");
        browser.evaluate("document.getElementById('token-input').value = 's3cret';"
                + "document.getElementById('token-form').requestSubmit(); true");
        browser.waitFor("document.querySelector('#workers tr[data-instance=\"5\"]') !== null", WAIT);
        assertEquals(true, browser.evaluate("document.getElementById('token-form').hidden"));

        // The footer's links open what the token may read. The new tab is stood in for by an object that records
        // where it was sent, and the document it was sent to is read back from the blob behind that address.
        browser.evaluate("window.opened = {}; window.open = () => ({ location: window.opened, close() {} });"
                + "const create = URL.createObjectURL;"
                + "URL.createObjectURL = (blob) => { window.blobs = window.blobs || {};"
                + " const url = create.call(URL, blob); window.blobs[url] = blob; return url; }; true");
        for (String path : List.of("/metrics", "/workers", "/openapi.json")) {
            browser.evaluate("window.opened.href = undefined;" + "document.querySelector('#data-links a[href=\"" + path
                    + "\"]').click(); true");
            browser.waitFor("typeof window.opened.href === 'string'", WAIT);
            String opened = (String) browser.evaluate("window.blobs[window.opened.href].text()");
            String direct = http.get(path).body();
            assertEquals(steady(path, direct), steady(path, opened), path + " opened with the token");
        }
    }

    /**
     * A node with a data directory: the Cluster panel shows its last snapshot, and the write's error in red once the
     * directory cannot be written; a rank whose stream lost batches for good is marked in the workers table.
     */
    @Test
    void showsTheDataDirectoryAndMarksAnInexactRank() throws Exception {
        node = IndexerNode.start(
                ServeConfig.local(0).withDurability(DurabilityConfig.inDirectory(dataDir, Duration.ofSeconds(1))));
        HttpJson http = new HttpJson(node.httpPort());
        engine = new TestPublisher();
        assertEquals(
                201,
                http.post(
                                "/register",
                                "{\"instance_id\":3,\"endpoint\":\"" + engine.endpoint()
                                        + "\",\"model_name\":\"m\",\"block_size\":4}")
                        .statusCode());
        engine.awaitSubscriber();
        // No replay endpoint: the batches between seq 0 and 3 are lost for good, and the stream is inexact.
        engine.publish(
                "",
                0,
                LocalNode.vllmBatch(
                        new EngineEvent.Store(new long[] {1}, null, new int[] {0, 1, 2, 3}, 4, "GPU", null)));
        engine.publish(
                "",
                3,
                LocalNode.vllmBatch(
                        new EngineEvent.Store(new long[] {2}, null, new int[] {4, 5, 6, 7}, 4, "GPU", null)));
        Await.until(
                "the stream marked inexact",
                WAIT,
                () -> http.get("/workers").body().contains("\"exact\":false,\"lost_batches\":2"));

        browser = HeadlessChromium.launch(chromium, 1400, 1000);
        browser.navigate("http://127.0.0.1:" + node.httpPort() + "/");
        browser.waitFor("document.querySelector('#workers tr[data-instance=\"3\"]')?.dataset.lost === '2'", WAIT);
        assertEquals(
                "inexact",
                browser.evaluate("document.querySelector('#workers tr[data-instance=\"3\"]').className"),
                "marked like a failed row");
        assertEquals(
                browser.evaluate("getComputedStyle(document.querySelector('#workers tr.inexact td')).backgroundColor"),
                browser.evaluate("(() => { const r = document.createElement('tr'); r.className = 'failed';"
                        + " const d = r.insertCell(); document.querySelector('#workers tbody').append(r);"
                        + " const c = getComputedStyle(d).backgroundColor; r.remove(); return c; })()"));
        String listener = (String)
                browser.evaluate("document.querySelector('#workers tr[data-instance=\"3\"]').cells[4].textContent");
        assertTrue(listener.contains("inexact, 2 lost"), listener);
        browser.waitFor("document.getElementById('data-dir')?.textContent.includes('last snapshot')", WAIT);
        String state = (String) browser.evaluate("document.getElementById('data-dir').textContent");
        assertTrue(state.startsWith(dataDir.toString()), state);
        assertEquals("true", browser.evaluate("document.getElementById('data-dir').dataset.writable"));

        // The directory becomes a file: every write fails, as on a full or read-only disk, even for root. The node's
        // own snapshots may add or rotate a file meanwhile, so the swap is tried until it holds.
        Await.until("the data directory replaced by a file", WAIT, () -> {
            try {
                try (Stream<Path> all = Files.walk(dataDir)) {
                    for (Path p :
                            all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(p);
                    }
                }
                Files.writeString(dataDir, "not a directory");
                return Files.isRegularFile(dataDir);
            } catch (java.io.IOException | java.io.UncheckedIOException e) {
                return false;
            }
        });
        browser.waitFor("document.querySelector('#data-dir .error') !== null", WAIT);
        String error = (String) browser.evaluate("document.querySelector('#data-dir .error').textContent");
        assertTrue(error.contains(dataDir.toString()), error);
        assertEquals("false", browser.evaluate("document.getElementById('data-dir').dataset.writable"));
        assertEquals(
                "rgb(197, 48, 48)",
                browser.evaluate("getComputedStyle(document.querySelector('#data-dir .error')).color"),
                "the error in red");
        browser.waitFor("document.getElementById('node-status').textContent === 'not ready'", WAIT);
        Files.delete(dataDir);
        Files.createDirectory(dataDir);
    }

    /**
     * A node running the selection service beside its index (as {@code serve --select-port} does) shows it: its
     * reservations, session bindings and predicted entries; a node without one shows no such card.
     */
    @Test
    void showsTheSelectionServiceRunningOnTheNode() throws Exception {
        node = IndexerNode.start(ServeConfig.local(0));
        browser = HeadlessChromium.launch(chromium, 1400, 1000);
        browser.navigate("http://127.0.0.1:" + node.httpPort() + "/");
        browser.waitFor("document.body.dataset.loaded === 'true'", WAIT);
        assertEquals(true, browser.evaluate("document.getElementById('selection').hidden"), "no service, no card");

        engine = new TestPublisher();
        HttpJson select = new HttpJson(SelectServiceCommand.deploy(
                        node,
                        SelectServiceConfig.on("127.0.0.1", 0).withSessionAffinityTtlSecs(60),
                        SelectionConfig.fromEnvironment(Map.of("DYN_ROUTER_PREDICTED_TTL_SECS", "600")))
                .actualPort());
        assertEquals(
                201,
                select.post(
                                "/workers",
                                "{\"worker_id\":1,\"model_name\":\"m\",\"endpoint\":\"http://w1\",\"block_size\":4,"
                                        + "\"kv_events_endpoint\":\"" + engine.endpoint() + "\"}")
                        .statusCode());
        assertEquals(
                200,
                select.post(
                                "/select_and_reserve",
                                "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4,5,6,7,8],\"session_id\":\"chat-1\"}")
                        .statusCode());
        browser.waitFor("document.getElementById('selection').hidden === false", WAIT);
        browser.waitFor(
                "document.getElementById('selection-facts').textContent.includes('Reservations1 (2 blocks booked)')",
                WAIT);
        String facts = (String) browser.evaluate("document.getElementById('selection-facts').textContent");
        assertTrue(facts.contains("Session bindings1 (1 leased)"), facts);
        assertTrue(facts.contains("Predicted entries2 blocks held · none ended yet"), facts);
    }

    /** Types the prompt into the playground, asks, and waits for its answer to be drawn. */
    private void askInPlayground(String model, String flavor, String tokens) throws Exception {
        browser.evaluate("(() => { const s = document.getElementById('q-partition');"
                + "s.value = [...s.options].find(o => o.textContent.startsWith("
                + JsonArray.of(model).encode()
                + "[0] + ' /')).value;"
                + "document.getElementById('q-flavor').value = '" + flavor + "';"
                + "document.getElementById('q-kind').value = 'tokens';"
                + "document.getElementById('q-result').replaceChildren();"
                + "document.getElementById('q-input').value = '" + tokens + "';"
                + "document.getElementById('q-submit').click(); return true; })()");
        browser.waitFor("document.querySelectorAll('#q-result .match[data-instance]').length > 0", WAIT);
        assertEquals("", browser.evaluate("document.getElementById('q-error').textContent"));
    }

    /** The GPU, CPU and disk tokens the bar of one instance was drawn with (cumulative, as both APIs give them). */
    private List<Long> bars(String instance) throws Exception {
        JsonArray values = (JsonArray) browser.evaluate("(() => { const m = document.querySelector("
                + "'#q-result .match[data-instance=\"" + instance + "\"]');"
                + "return [m.dataset.gpu, m.dataset.cpu, m.dataset.disk].map(Number); })()");
        return values.stream().map(v -> ((Number) v).longValue()).toList();
    }

    private List<String> rows(String selector, String expression) throws Exception {
        Object value = browser.evaluate(
                "[...document.querySelectorAll('" + selector.replace("'", "\\'") + "')].map(r => " + expression + ")");
        return ((JsonArray) value).stream().map(Object::toString).toList();
    }

    /**
     * What two reads of a page must agree on: the first line of /metrics (its values move), and no listener's error
     * time (it moves with every reconnect attempt of a listener whose engine is not there).
     */
    private static String steady(String path, String body) {
        if (path.equals("/metrics")) {
            return body.substring(0, body.indexOf('\n'));
        }
        return body.replaceAll("\"(last|previous)_error_at\":\"[^\"]*\"", "");
    }
}
