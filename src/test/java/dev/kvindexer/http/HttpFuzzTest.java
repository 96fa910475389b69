package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.cli.SlotTrackerCommand;
import dev.kvindexer.conductor.http.CppConductorError;
import dev.kvindexer.conductor.registry.CppConductorSubscriptions;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.config.SlotTrackerConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.FreePort;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.RawHttp;
import dev.kvindexer.tracker.SlotTrackerVerticle;
import dev.kvindexer.web.JsonBodyReader;
import dev.kvindexer.web.MsgpackBodies;
import dev.kvindexer.web.MsgpackBodyReader;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;

/**
 * Every HTTP route of the indexer and every POST route of the slot tracker, against every class of malformed input
 * (truncated, wrong types, huge numbers and declared lengths, deep nesting, lone surrogates, NaN, empty, trailing
 * garbage, wrong content types, bad query strings, random bytes), in JSON and, where the route reads it, msgpack;
 * then a few thousand seeded random mutations of valid bodies. No answer may be a 5xx, every 4xx carries its flavor's
 * error body, both services keep answering /health, and no rejected request changes what /workers, /dump, /services,
 * /peers and /loads show: the state is compared before every request that might be accepted and after every one that
 * was, so everything rejected in between is proven to have changed nothing.
 */
class HttpFuzzTest {
    private static final long SEED = 0x6b76_6675_7a7aL;
    private static final int MUTATIONS = 3_000;
    private static final String JSON = "application/json";
    private static final String MSGPACK = "application/msgpack";
    private static final Set<String> MOONCAKE_CODES = Set.of(
            MooncakeJsonError.INVALID_REQUEST, MooncakeJsonError.INVALID_REGISTRATION, MooncakeJsonError.NOT_FOUND);
    private static final Set<String> CONDUCTOR_CODES = Set.of(
            CppConductorError.INVALID_MSGPACK,
            CppConductorError.UNKNOWN_FIELD,
            CppConductorError.MISSING,
            CppConductorError.INVALID_TYPE,
            CppConductorError.INVALID_VALUE,
            CppConductorError.OUT_OF_RANGE,
            CppConductorError.UNSUPPORTED,
            CppConductorError.INVALID_REGISTRATION);
    private static final int[] TOKENS = {1, 2, 3, 4, 5, 6, 7, 8};

    /** The seeded engines' endpoints: held so that nothing listens there while the state is watched. */
    private static final Socket unreachableDynamo = FreePort.reserve();

    private static final Socket unreachableMooncake = FreePort.reserve();
    private static IndexerNode node;
    private static HttpJson indexer;
    private static HttpJson tracker;
    private static Wire indexerWire;
    private static Wire trackerWire;
    private static Watched indexerState;
    private static Watched trackerState;
    private final Random random = new Random(SEED);
    private int sent;

    /** A POST route with a valid body to start from. */
    private record Route(
            HttpJson service, String path, JsonObject template, boolean mutates, boolean msgpack, boolean dynamoOnly) {}

    /**
     * What a service shows of its state, checked around the requests that might change it: a rejected request must
     * leave it as it was.
     */
    private static final class Watched {
        private final Supplier<String> snapshot;
        private final Runnable reseed;
        private String expected;

        Watched(Supplier<String> snapshot, Runnable reseed) {
            this.snapshot = snapshot;
            this.reseed = reseed;
            this.expected = snapshot.get();
        }

        /** How often the state was compared, so a test that compared it too seldom says so. */
        static int comparisons;

        /** Everything since the last look was rejected: the state must be as it was. */
        void verify(String after) {
            comparisons++;
            assertEquals(expected, snapshot.get(), "a rejected request changed the state; it came after " + after);
        }

        /** An accepted request may have changed the state: look again, and put the seeded worker back if it left. */
        void accepted() {
            reseed.run();
            expected = snapshot.get();
        }
    }

    @BeforeAll
    static void start() throws Exception {
        node = IndexerNode.start(ServeConfig.local(0));
        indexer = new HttpJson(node.httpPort());
        SlotTrackerVerticle slots =
                SlotTrackerCommand.deploy(node.vertx(), SlotTrackerConfig.on("127.0.0.1", 0), () -> "");
        tracker = new HttpJson(slots.actualPort());
        indexerWire = new Wire(node.httpPort());
        trackerWire = new Wire(slots.actualPort());
        // What /services and /peers show is read in the node itself, which is quicker than asking over HTTP.
        // A listener's error time moves with every reconnect attempt, which is not state a request could change.
        indexerState = new Watched(
                () -> indexerWire.get("/workers").replaceAll("\"(last|previous)_error_at\":\"[^\"]*\"", "")
                        + indexerWire.get("/dump")
                        + MooncakeJsonAnswers.services(node.registry().workers(null, null), List.of())
                        + conductorState(node.conductor())
                        + node.peers().registered(),
                HttpFuzzTest::seedIndexer);
        trackerState =
                new Watched(() -> trackerWire.get("/workers") + trackerWire.get("/loads"), HttpFuzzTest::seedTracker);
        indexerState.accepted();
        trackerState.accepted();
        assertTrue(indexer.get("/dump").body().contains("\"block_hash\":12,"), "the seeded blocks are there");
    }

    @AfterAll
    static void stop() throws IOException {
        node.close();
        unreachableDynamo.close();
        unreachableMooncake.close();
    }

    /** The C++ Conductor's registrations and contexts (a context outlives its registrations there). */
    private static String conductorState(CppConductorSubscriptions subscriptions) {
        var conductor = subscriptions.conductor();
        return conductor.services().toCompletionStage().toCompletableFuture().join()
                + conductor
                        .contexts()
                        .toCompletionStage()
                        .toCompletableFuture()
                        .join()
                        .toString();
    }

    /** A Dynamo worker, a Mooncake engine holding two blocks: what rejected requests must leave alone. */
    private static void seedIndexer() {
        if (!indexer.get("/workers").body().contains("\"instance_id\":1,")) {
            assertEquals(
                    201,
                    indexer.post(
                                    "/register",
                                    "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:"
                                            + unreachableDynamo.getLocalPort() + "\","
                                            + "\"model_name\":\"m\",\"routing_group\":\"g\",\"block_size\":4}")
                            .statusCode());
        }
        if (!indexer.get("/services").body().contains("engine-a")) {
            assertEquals(
                    200,
                    indexer.post(
                                    "/register",
                                    "{\"endpoint\":\"tcp://127.0.0.1:" + unreachableMooncake.getLocalPort()
                                            + "\",\"type\":\"vLLM\","
                                            + "\"modelname\":\"mc\",\"instance_id\":\"engine-a\",\"block_size\":4}")
                            .statusCode());
            assertEquals(
                    200,
                    indexer.post(
                                    "/events",
                                    new JsonObject()
                                            .put("event_type", "stored")
                                            .put("event_id", 1)
                                            .put("model_name", "mc")
                                            .put("backend_id", "engine-a")
                                            .put(
                                                    "seq_hashes",
                                                    new JsonArray().add(11).add(12))
                                            .put("base_block_idx", 0)
                                            .put(
                                                    "token_ids",
                                                    new JsonArray(Arrays.stream(TOKENS)
                                                            .boxed()
                                                            .toList()))
                                            .encode())
                            .statusCode());
        }
    }

    private static void seedTracker() {
        if (!tracker.get("/workers").body().contains("\"worker_id\":7,")) {
            assertEquals(
                    201,
                    tracker.post(
                                    "/register",
                                    "{\"worker_id\":7,\"model_name\":\"m\",\"tenant_id\":\"t\","
                                            + "\"block_size\":16,\"dp_start\":0,\"dp_size\":2}")
                            .statusCode());
            assertEquals(
                    201,
                    tracker.post(
                                    "/add",
                                    "{\"model_name\":\"m\",\"tenant_id\":\"t\",\"request_id\":\"r1\","
                                            + "\"worker_id\":7,\"dp_rank\":1,\"sequence_hashes\":[5,6],\"new_isl_tokens\":32}")
                            .statusCode());
        }
    }

    private static JsonObject json(String text) {
        return new JsonObject(text);
    }

    private static List<Route> routes() {
        String tokens = "[1,2,3,4,5,6,7,8]";
        List<Route> r = new ArrayList<>();
        // The indexer: both flavors on the shared routes, in JSON and msgpack.
        r.add(new Route(
                indexer,
                "/query",
                json("{\"model_name\":\"m\",\"routing_group\":\"g\",\"token_ids\":" + tokens + ",\"lora_name\":null}"),
                false,
                true,
                false));
        r.add(new Route(
                indexer,
                "/query",
                json("{\"model\":\"mc\",\"tenant_id\":\"default\",\"block_size\":4," + "\"token_ids\":" + tokens + "}"),
                false,
                true,
                false));
        r.add(new Route(
                indexer,
                "/query_by_hash",
                json("{\"model_name\":\"m\",\"routing_group\":\"g\"," + "\"block_hashes\":[1,-2,3]}"),
                false,
                true,
                false));
        r.add(new Route(
                indexer, "/query_by_hash", json("{\"model\":\"mc\",\"seq_hashes\":[\"11\",12]}"), false, true, false));
        r.add(new Route(
                indexer,
                "/register",
                json("{\"instance_id\":42,\"endpoint\":\"inproc://fuzz-42\","
                        + "\"model_name\":\"fz\",\"routing_group\":\"g\",\"block_size\":4,\"dp_rank\":0}"),
                true,
                true,
                false));
        r.add(new Route(
                indexer,
                "/register",
                json("{\"endpoint\":\"inproc://fuzz-mc\",\"type\":\"vLLM\","
                        + "\"modelname\":\"fz\",\"instance_id\":\"fz-engine\",\"block_size\":4,\"lora_name\":\"l\"}"),
                true,
                true,
                false));
        // The C++ Conductor's own registration, whose checks go past its strict keys to the subscription.
        r.add(new Route(
                indexer,
                "/register",
                json("{\"endpoint\":\"inproc://fuzz-cpp\",\"type\":\"vLLM\",\"modelname\":\"fz-cpp\","
                        + "\"instance_id\":\"fz-cpp\",\"block_size\":4,\"dp_rank\":0,\"hash_profile\":"
                        + "{\"strategy\":\"vllm_v1\",\"algorithm\":\"sha256_cbor\",\"python_hash_seed\":\"0\","
                        + "\"index_projection\":\"low64_be\"}}"),
                true,
                true,
                false));
        r.add(new Route(
                indexer,
                "/unregister",
                json("{\"instance_id\":42,\"model_name\":\"fz\"," + "\"routing_group\":\"g\",\"dp_rank\":0}"),
                true,
                true,
                false));
        r.add(new Route(
                indexer,
                "/unregister",
                json("{\"instance_id\":\"fz-engine\",\"tenant_id\":\"default\"}"),
                true,
                true,
                false));
        r.add(new Route(
                indexer,
                "/events",
                json("{\"events\":[{\"event_type\":\"stored\",\"event_id\":2,"
                        + "\"model_name\":\"mc\",\"backend_id\":\"fz-engine\",\"seq_hashes\":[21,22],\"parent_hash\":12,"
                        + "\"token_ids\":" + tokens
                        + "},{\"event_type\":\"removed\",\"event_id\":3,\"model_name\":\"fz\","
                        + "\"backend_id\":\"fz-engine\",\"seq_hashes\":[\"21\"]}]}"),
                true,
                false,
                true));
        r.add(new Route(indexer, "/register_peer", json("{\"url\":\"http://127.0.0.1:9\"}"), true, false, true));
        r.add(new Route(indexer, "/deregister_peer", json("{\"url\":\"http://127.0.0.1:9\"}"), true, false, true));
        r.add(new Route(
                indexer, "/test/pause_listener", json("{\"instance_id\":42,\"dp_rank\":0}"), true, false, true));
        r.add(new Route(indexer, "/test/resume_listener", json("{\"instance_id\":42}"), true, false, true));
        r.add(new Route(indexer, "/reopen_logs", json("{}"), false, false, true));
        // The slot tracker's POST routes.
        String scope = "\"model_name\":\"m\",\"tenant_id\":\"t\"";
        r.add(new Route(
                tracker,
                "/register",
                json("{\"worker_id\":8," + scope + ",\"block_size\":16,\"dp_start\":0," + "\"dp_size\":2}"),
                true,
                false,
                true));
        r.add(new Route(tracker, "/unregister", json("{\"worker_id\":8," + scope + "}"), true, false, true));
        r.add(new Route(
                tracker,
                "/add",
                json("{" + scope + ",\"request_id\":\"fz\",\"worker_id\":7,\"dp_rank\":0,"
                        + "\"sequence_hashes\":[1,2],\"new_isl_tokens\":16}"),
                true,
                false,
                true));
        r.add(new Route(
                tracker, "/prefill_complete", json("{" + scope + ",\"request_id\":\"fz\"}"), true, false, true));
        r.add(new Route(tracker, "/free", json("{" + scope + ",\"request_id\":\"fz\"}"), true, false, true));
        r.add(new Route(
                tracker,
                "/potential_loads",
                json("{" + scope + ",\"sequence_hashes\":[1,2]," + "\"new_isl_tokens\":16}"),
                false,
                false,
                true));
        return r;
    }

    // ---- sending and checking ----

    private record Answer(int status, String contentType, byte[] body) {}

    /**
     * A kept-alive connection to one service, opened again whenever the server closes it. Raw, because the JDK's
     * client will not send a query that does not decode, and it is quicker.
     */
    private static final class Wire {
        private final int port;
        private RawHttp socket;

        Wire(int port) {
            this.port = port;
        }

        Answer call(String method, String pathAndQuery, byte[] body, String contentType) {
            byte[] content = body == null ? new byte[0] : body;
            byte[] request = concat(
                    (method + " " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    + (contentType == null ? "" : "Content-Type: " + contentType + "\r\n")
                                    + "Content-Length: " + content.length + "\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1),
                    content);
            if (socket == null || !socket.send(request)) {
                reconnect();
                assertTrue(socket.send(request), "cannot send to port " + port);
            }
            RawHttp.Answer a = socket.answer(Duration.ofSeconds(20));
            if ("close".equalsIgnoreCase(a.header("connection"))) {
                socket.close();
                socket = null;
            }
            String type = a.header("content-type");
            return new Answer(a.status(), type == null ? "" : type, a.body().getBytes(StandardCharsets.ISO_8859_1));
        }

        String get(String path) {
            Answer a = call("GET", path, null, null);
            assertEquals(200, a.status(), path);
            return new String(a.body(), StandardCharsets.UTF_8);
        }

        private void reconnect() {
            if (socket != null) {
                socket.close();
            }
            socket = new RawHttp(port);
        }
    }

    private static Wire wire(HttpJson service) {
        return service == indexer ? indexerWire : trackerWire;
    }

    private void post(Route route, String query, byte[] body, String contentType, String what) {
        Watched state = route.service() == indexer ? indexerState : trackerState;
        boolean mightBeAccepted = route.mutates() && parses(body);
        String description = "POST " + route.path() + query + " [" + contentType + "] " + what + ": " + preview(body);
        if (mightBeAccepted) {
            state.verify(description);
        }
        Answer answer = wire(route.service()).call("POST", route.path() + query, body, contentType);
        check(answer, description, expectedShape(route, query, contentType));
        if (answer.status() < 300 && route.mutates()) {
            state.accepted();
        }
        if (++sent % 500 == 0) {
            indexerState.verify(description);
            trackerState.verify(description);
            assertEquals(200, indexer.get("/health").statusCode());
            assertEquals(200, tracker.get("/health").statusCode());
        }
    }

    /** Whether a body could be a request at all: a JSON or msgpack object. Others are refused for sure. */
    private static boolean parses(byte[] body) {
        if (body == null) {
            return false;
        }
        for (Supplier<Object> read :
                List.<Supplier<Object>>of(() -> JsonBodyReader.read(body), () -> MsgpackBodyReader.read(body))) {
            try {
                if (read.get() instanceof JsonObject) {
                    return true;
                }
            } catch (RuntimeException refused) {
                // not in this encoding
            }
        }
        return false;
    }

    private enum Shape {
        DYNAMO,
        MOONCAKE,
        EITHER
    }

    /** Dynamo-only routes, the slot tracker, and a Dynamo flavor asked for answer {"error"}; msgpack is Mooncake's. */
    private static Shape expectedShape(Route route, String query, String contentType) {
        if (route.dynamoOnly() || query.contains("flavor=dynamo")) {
            return Shape.DYNAMO;
        }
        return MsgpackBodies.isMsgpackType(contentType) ? Shape.MOONCAKE : Shape.EITHER;
    }

    private static void check(Answer answer, String description, Shape shape) {
        int status = answer.status();
        String shown = description + "\n -> " + status + " " + new String(answer.body(), StandardCharsets.UTF_8);
        assertTrue(status < 500, "a 5xx: " + shown);
        if (status < 400) {
            return;
        }
        JsonObject error = errorBody(answer, shown);
        assertTrue(error.getValue("error") instanceof String e && !e.isBlank(), "no error text: " + shown);
        boolean dynamo = error.fieldNames().equals(Set.of("error"));
        boolean mooncake = error.getValue("reason") instanceof String
                && MOONCAKE_CODES.contains(error.getString("error"))
                && Set.of("error", "reason", "field").containsAll(error.fieldNames());
        // The C++ Conductor's envelope (msgpack /register, /unregister, /query): the text first, the code second.
        boolean conductor = error.getValue("reason") instanceof String reason
                && CONDUCTOR_CODES.contains(reason)
                && Set.of("error", "reason", "field", "index").containsAll(error.fieldNames());
        mooncake |= conductor;
        assertTrue(dynamo || mooncake, "no flavor's error body: " + shown);
        // A body over the limit, a refused content type and a query that does not decode are refused before any
        // flavor is known, in the shape both flavors share.
        boolean beforeFlavor =
                status == 413 || status == 415 || error.getString("error").startsWith("invalid query");
        if (shape == Shape.DYNAMO || beforeFlavor) {
            assertTrue(dynamo, "not the Dynamo error body: " + shown);
        } else if (shape == Shape.MOONCAKE) {
            assertTrue(mooncake, "not the Mooncake error body: " + shown);
        }
    }

    private static JsonObject errorBody(Answer answer, String shown) {
        String type = answer.contentType();
        try {
            if (MsgpackBodies.isMsgpackType(type)) {
                try (MessageUnpacker in = MessagePack.newDefaultUnpacker(answer.body())) {
                    return new JsonObject(in.unpackValue().toJson());
                }
            }
            assertEquals(JSON, type, "an error body that is no JSON: " + shown);
            return new JsonObject(new String(answer.body(), StandardCharsets.UTF_8));
        } catch (IOException | RuntimeException e) {
            throw new AssertionError("an error body that does not decode: " + shown, e);
        }
    }

    private static String preview(byte[] body) {
        if (body == null) {
            return "(none)";
        }
        String text = new String(body, 0, Math.min(body.length, 160), StandardCharsets.ISO_8859_1);
        boolean printable = text.chars().allMatch(c -> c >= 0x20 && c < 0x7f);
        return (printable ? text : HexFormat.of().formatHex(body, 0, Math.min(body.length, 80)))
                + (body.length > 160 ? "... (" + body.length + " bytes)" : "");
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] msgpack(Object jsonValue) {
        return MsgpackBodies.encode(Json.encode(jsonValue)).getBytes();
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private static byte[] bytes(int... values) {
        byte[] b = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = (byte) values[i];
        }
        return b;
    }

    /** The template as msgpack with member {@code field} written as the raw msgpack {@code value}. */
    private static byte[] msgpackWith(JsonObject template, String field, byte[] value) {
        JsonObject rest = template.copy();
        rest.remove(field);
        byte[] members = msgpack(rest);
        // A fixmap header of one more member, then the other members, then the raw one.
        return concat(
                bytes(0x80 | (rest.size() + 1)), Arrays.copyOfRange(members, 1, members.length), msgpack(field), value);
    }

    // ---- the malformed classes ----

    private static final List<Object> WRONG_VALUES = Arrays.asList(
            "str",
            // Endpoints that pass a first look but no subscriber can use.
            "tcp://[::1:5557",
            "tcp://::1:5557",
            -1,
            1.5,
            true,
            null,
            new JsonArray("[1,\"x\"]"),
            new JsonObject(),
            new BigInteger("18446744073709551616"),
            4294967296L);
    private static final List<String> HUGE_NUMBERS =
            List.of("1e999999", "-1e999999", "123456789012345678901234567890", "-0", "9".repeat(2_000));
    private static final List<String> CONTENT_TYPES = Arrays.asList(
            null,
            "text/plain",
            "application/xml",
            "multipart/form-data; boundary=x",
            "application/x-www-form-urlencoded",
            "application/json; charset=utf-16",
            "application/vnd.kv+json",
            "application/msgpack",
            "application/x-msgpack",
            "*/*",
            ";;;",
            "application/");
    private static final List<String> QUERIES = List.of(
            "",
            "?flavor=dynamo",
            "?flavor=mooncake",
            "?format=instances",
            "?flavor=mooncake-data",
            "?flavor=bogus",
            "?format=x",
            "?flavor=%zz",
            "?%",
            "?a=%e9",
            "?flavor=&format=");

    @Test
    void everyRouteSurvivesEveryMalformedInputAndMutationsOfValidBodies() {
        List<Route> routes = routes();
        for (Route route : routes) {
            malformedJson(route);
            if (route.msgpack()) {
                malformedMsgpack(route);
            }
        }
        for (int i = 0; i < MUTATIONS; i++) {
            Route route = routes.get(random.nextInt(routes.size()));
            boolean asMsgpack = route.msgpack() && random.nextBoolean();
            byte[] valid = asMsgpack
                    ? msgpack(route.template())
                    : utf8(route.template().encode());
            String query = route.msgpack() && random.nextInt(4) == 0 ? QUERIES.get(random.nextInt(QUERIES.size())) : "";
            post(route, query, mutate(valid, asMsgpack), asMsgpack ? MSGPACK : JSON, "mutation " + i);
        }
        getRoutes();
        indexerState.verify("the last request");
        trackerState.verify("the last request");
        assertEquals(200, indexer.get("/health").statusCode());
        assertEquals(200, tracker.get("/health").statusCode());
        assertTrue(indexer.get("/workers").body().contains("\"instance_id\":1,"), "the seeded worker is still there");
        System.out.println("HttpFuzzTest: " + sent + " requests, state compared " + Watched.comparisons + " times");
        assertTrue(Watched.comparisons > 1_000, "the state was compared only " + Watched.comparisons + " times");
    }

    private void malformedJson(Route route) {
        JsonObject t = route.template();
        byte[] valid = utf8(t.encode());
        for (int cut : new int[] {1, valid.length / 3, valid.length / 2, valid.length - 1}) {
            post(route, "", Arrays.copyOf(valid, cut), JSON, "truncated");
        }
        for (String field : t.fieldNames()) {
            for (Object wrong : WRONG_VALUES) {
                post(route, "", utf8(t.copy().put(field, wrong).encode()), JSON, "wrong type of " + field);
            }
            String without = t.copy().put(field, "#").encode();
            for (String huge : HUGE_NUMBERS) {
                post(route, "", utf8(without.replace("\"#\"", huge)), JSON, "huge number in " + field);
            }
            for (String nan : List.of("NaN", "-Infinity", "01", "1.")) {
                post(route, "", utf8(without.replace("\"#\"", nan)), JSON, "not a JSON number in " + field);
            }
            for (String lone : List.of("\\ud800", "x\\udfff")) {
                post(route, "", utf8(without.replace("\"#\"", "\"" + lone + "\"")), JSON, "surrogate in " + field);
                if (t.getValue(field) instanceof JsonArray) {
                    post(
                            route,
                            "",
                            utf8(without.replace("\"#\"", "[\"" + lone + "\"]")),
                            JSON,
                            "surrogate in " + field);
                }
            }
            post(
                    route,
                    "",
                    utf8(without.replace("\"#\"", "[".repeat(1_001) + "]".repeat(1_001))),
                    JSON,
                    "too deep in " + field);
            post(
                    route,
                    "",
                    utf8(without.replace("\"#\"", "[".repeat(999) + "]".repeat(999))),
                    JSON,
                    "deep in " + field);
        }
        post(route, "", utf8("[".repeat(100_000) + "]".repeat(100_000)), JSON, "deep");
        post(route, "", utf8("{\"a\":".repeat(50_000) + "1" + "}".repeat(50_000)), JSON, "deep objects");
        post(route, "", new byte[0], JSON, "empty");
        post(route, "", null, JSON, "no body");
        for (String garbage : List.of("xyz", "}", " {}", "\u0000", ",1", "]")) {
            post(route, "", utf8(t.encode() + garbage), JSON, "trailing garbage");
        }
        otherTypesQueriesAndNoise(route, valid, JSON, CONTENT_TYPES);
        post(
                route,
                "",
                utf8(t.encode().replace("{", "{\"extra\":" + "[1,".repeat(20_000) + "1" + "]".repeat(20_000) + ",")),
                JSON,
                "a big unknown member");
    }

    private void malformedMsgpack(Route route) {
        JsonObject t = route.template();
        byte[] valid = msgpack(t);
        for (int cut : new int[] {1, valid.length / 3, valid.length / 2, valid.length - 1}) {
            post(route, "", Arrays.copyOf(valid, cut), MSGPACK, "truncated");
        }
        List<byte[]> hostile = List.of(
                bytes(0xdd, 0x7f, 0xff, 0xff, 0xff),
                bytes(0xdd, 0x30, 0, 0, 0),
                bytes(0xdd, 0xff, 0xff, 0xff, 0xff),
                bytes(0xdf, 0x7f, 0xff, 0xff, 0xff),
                bytes(0xdb, 0x7f, 0xff, 0xff, 0xff),
                bytes(0xc6, 0x7f, 0xff, 0xff, 0xff),
                bytes(0xc9, 0x7f, 0xff, 0xff, 0xff, 0x01),
                bytes(0xc7, 0x10, 0x01),
                bytes(0xc1),
                bytes(0xd4, 0x01, 0x00),
                bytes(0xa3, 0xed, 0xa0, 0x80),
                bytes(0xa2, 0xc3, 0x28),
                concat(bytes(0xcb), ByteBuffer.allocate(8).putDouble(Double.NaN).array()),
                concat(
                        bytes(0xcb),
                        ByteBuffer.allocate(8)
                                .putDouble(Double.POSITIVE_INFINITY)
                                .array()),
                bytes(0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
                bytes(0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0),
                bytes(0xc4, 0x03, 1, 2, 3),
                bytes(0xc4, 0x04, 1, 2, 3, 4),
                bytes(0x81, 0x01, 0x02),
                bytes(0x90),
                bytes(0x80),
                bytes(0xc0),
                bytes(0xc2));
        for (int i = 0; i < hostile.size(); i++) {
            post(route, "", hostile.get(i), MSGPACK, "hostile value as the body");
            // Each member meets a third of them, a different third for the next member.
            int member = 0;
            for (String field : t.fieldNames()) {
                if ((i + member++) % 3 == 0) {
                    post(route, "", msgpackWith(t, field, hostile.get(i)), MSGPACK, "hostile value in " + field);
                }
            }
        }
        for (String field : t.fieldNames()) {
            for (Object wrong : WRONG_VALUES) {
                if (!(wrong instanceof BigInteger b) || b.signum() >= 0 && b.bitLength() <= 64) {
                    post(route, "", msgpack(t.copy().put(field, wrong)), MSGPACK, "wrong type of " + field);
                }
            }
            byte[] deep = new byte[1_001];
            Arrays.fill(deep, (byte) 0x91);
            post(route, "", msgpackWith(t, field, concat(deep, bytes(0xc0))), MSGPACK, "too deep in " + field);
        }
        byte[] deepest = new byte[100_001];
        Arrays.fill(deepest, (byte) 0x91);
        post(route, "", deepest, MSGPACK, "deep");
        post(route, "", new byte[0], MSGPACK, "empty");
        post(route, "", concat(valid, bytes(0xc0)), MSGPACK, "trailing garbage");
        post(route, "", concat(valid, utf8("xyz")), MSGPACK, "trailing garbage");
        otherTypesQueriesAndNoise(
                route,
                valid,
                MSGPACK,
                Arrays.asList(JSON, "text/plain", null, "application/vnd.msgpack; q=1", "APPLICATION/MSGPACK"));
    }

    /** The valid body under other content types and with every query string; random bytes as {@code type}. */
    private void otherTypesQueriesAndNoise(Route route, byte[] valid, String type, List<String> otherTypes) {
        for (String other : otherTypes) {
            post(route, "", valid, other, "content type");
        }
        for (String query : QUERIES) {
            post(route, query, valid, type, "query");
        }
        for (int i = 0; i < 20; i++) {
            byte[] noise = new byte[random.nextInt(300)];
            random.nextBytes(noise);
            post(route, "", noise, i % 4 == 0 ? null : type, "random bytes");
        }
    }

    /** GET routes of both services, with bad query strings, bodies they do not expect and methods they lack. */
    private void getRoutes() {
        Map<HttpJson, List<String>> gets = Map.of(
                indexer,
                        List.of(
                                "/health",
                                "/ready",
                                "/metrics",
                                "/workers",
                                "/dump",
                                "/peers",
                                "/services",
                                "/openapi.json",
                                "/no-such-route",
                                "/query"),
                tracker, List.of("/health", "/metrics", "/workers", "/loads", "/openapi.json", "/no-such-route"));
        List<String> queries = List.of(
                "",
                "?model_name=m",
                "?model_name=%zz",
                "?%",
                "?routing_group=%e9%80",
                "?tenant_id=%ed%a0%80",
                "?model_name=" + "x".repeat(3_000),
                "?a=1&a=2&;=&=",
                "?flavor=bogus");
        gets.forEach((service, paths) -> {
            for (String path : paths) {
                for (String query : queries) {
                    check(wire(service).call("GET", path + query, null, null), "GET " + path + query, Shape.DYNAMO);
                }
                for (String method : List.of("PUT", "DELETE", "PATCH", "OPTIONS", "BREW")) {
                    check(wire(service).call(method, path, utf8("{}"), JSON), method + " " + path, Shape.DYNAMO);
                }
                check(
                        wire(service).call("GET", path, utf8("{\"x\":1}"), JSON),
                        "GET with a body " + path,
                        Shape.DYNAMO);
            }
        });
    }

    // ---- mutations ----

    private static final List<byte[]> JSON_PIECES = List.of(
            utf8("null"),
            utf8("["),
            utf8("]"),
            utf8("{"),
            utf8("}"),
            utf8("\""),
            utf8(","),
            utf8(":"),
            utf8("-"),
            utf8("0"),
            utf8("1e999"),
            utf8("18446744073709551616"),
            utf8("\\ud800"),
            utf8("\\u0000"),
            utf8("true"),
            utf8("NaN"),
            utf8("9"),
            utf8("\\"),
            utf8("[[[[[[[["));
    private static final List<byte[]> MSGPACK_PIECES = List.of(
            bytes(0xc0),
            bytes(0xc1),
            bytes(0xdd, 0x7f, 0xff, 0xff, 0xff),
            bytes(0xdb, 0xff, 0xff, 0xff, 0xff),
            bytes(0xc6, 0x7f, 0, 0, 0),
            bytes(0xdf, 0, 0, 0, 5),
            bytes(0x91),
            bytes(0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0),
            bytes(0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
            bytes(0xc7, 0x05, 0x01),
            bytes(0xa3, 0xed, 0xa0, 0x80),
            bytes(0x9f),
            bytes(0x8f),
            bytes(0xff));

    /** One to three edits: a byte changed, a run deleted, inserted or repeated, a piece of syntax put in, a cut. */
    private byte[] mutate(byte[] body, boolean msgpack) {
        byte[] b = body;
        int edits = 1 + random.nextInt(3);
        for (int e = 0; e < edits; e++) {
            int at = b.length == 0 ? 0 : random.nextInt(b.length);
            int run = Math.min(1 + random.nextInt(8), b.length - at);
            switch (random.nextInt(6)) {
                case 0 -> {
                    if (b.length > 0) {
                        b = b.clone();
                        b[at] = (byte) random.nextInt(256);
                    }
                }
                case 1 -> b = concat(Arrays.copyOf(b, at), Arrays.copyOfRange(b, at + run, b.length));
                case 2 -> {
                    byte[] noise = new byte[1 + random.nextInt(4)];
                    random.nextBytes(noise);
                    b = concat(Arrays.copyOf(b, at), noise, Arrays.copyOfRange(b, at, b.length));
                }
                case 3 -> {
                    List<byte[]> pieces = msgpack ? MSGPACK_PIECES : JSON_PIECES;
                    b = concat(
                            Arrays.copyOf(b, at),
                            pieces.get(random.nextInt(pieces.size())),
                            Arrays.copyOfRange(b, at, b.length));
                }
                case 4 -> b = concat(Arrays.copyOf(b, at + run), Arrays.copyOfRange(b, at, b.length));
                default -> b = Arrays.copyOf(b, at);
            }
        }
        return b;
    }
}
