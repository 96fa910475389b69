package dev.kvindexer.sim;

import dev.kvindexer.hash.VllmBlockHasher;
import dev.kvindexer.wire.LiveFrames;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * vLLM engines of one model feeding a running indexer: each binds a publisher on loopback, registers it through the
 * C++ Conductor's msgpack {@code /register} with the {@link EngineHashKind#CONDUCTOR_PROFILE} profile
 * (docs/api/mooncake-cpp.md) or through Dynamo's JSON one (docs/api/dynamo.md), and publishes {@code BlockStored} and
 * {@code BlockRemoved} batches keyed by vLLM's hash of that profile. Engine {@code e} is instance {@code eng-e} to the
 * Conductor's API and {@code e + 1} to Dynamo's, rank 0. Not thread-safe.
 */
public final class LoopbackEngines implements AutoCloseable {
    public static final int BLOCK_SIZE = 16;
    /** Blocks per event: a prompt goes out as several, each naming the block before it as parent. */
    private static final int EVENT_BLOCKS = 64;

    private final String host;
    private final int port;
    private final String model;
    private final ZContext zmq = new ZContext();
    private final List<ZMQ.Socket> publishers = new ArrayList<>();
    private final List<Long> sequences = new ArrayList<>();
    private final VllmBlockHasher hasher = new VllmBlockHasher(EngineHashKind.CONDUCTOR_PROFILE);

    /** @param base the indexer's base URL, such as {@code http://127.0.0.1:8090} */
    public LoopbackEngines(String base, String model) {
        URI uri = URI.create(base);
        this.host = uri.getHost();
        this.port = uri.getPort();
        this.model = model;
    }

    public static String instance(int engine) {
        return "eng-" + engine;
    }

    /** Unregisters rank 0 of engine {@code e}, as a fill from an earlier process would have left it. */
    public void unregister(int e) throws IOException, InterruptedException {
        post("/unregister", msgpack(p -> {
            p.packMapHeader(2);
            p.packString("instance_id").packString(instance(e));
            p.packString("dp_rank").packInt(0);
        }));
    }

    /**
     * Binds the next engine's publisher and registers it the C++ Conductor's way; returns once the indexer has
     * subscribed, so nothing is sent into the slow-joiner window (an XPUB is a PUB on the wire that also shows the
     * subscription). Throws with the indexer's answer when it refuses the registration, and when it has not
     * subscribed within {@code wait}.
     */
    public void registerConductor(Duration wait) throws IOException, InterruptedException {
        int e = publishers.size();
        ZMQ.Socket pub = bind(wait);
        await(pub, e, wait, post("/register", msgpack(p -> {
            p.packMapHeader(7);
            p.packString("endpoint").packString(pub.getLastEndpoint());
            p.packString("type").packString("vLLM");
            p.packString("modelname").packString(model);
            p.packString("instance_id").packString(instance(e));
            p.packString("block_size").packInt(BLOCK_SIZE);
            p.packString("dp_rank").packInt(0);
            RegisterClient.packConductorProfile(p);
        })));
    }

    /** {@link #registerConductor} through Dynamo's JSON {@code /register}. */
    public void registerDynamo(Duration wait) throws IOException, InterruptedException {
        int e = publishers.size();
        ZMQ.Socket pub = bind(wait);
        String body = new JsonObject()
                .put("instance_id", e + 1)
                .put("endpoint", pub.getLastEndpoint())
                .put("model_name", model)
                .put("block_size", BLOCK_SIZE)
                .encode();
        await(pub, e, wait, post("/register", body.getBytes(StandardCharsets.UTF_8), "application/json"));
    }

    private ZMQ.Socket bind(Duration wait) {
        ZMQ.Socket pub = zmq.createSocket(SocketType.XPUB);
        pub.setSndHWM(0); // no limit: nothing published is dropped
        pub.setLinger(0);
        pub.setReceiveTimeOut((int) wait.toMillis());
        pub.bind("tcp://127.0.0.1:0");
        publishers.add(pub);
        sequences.add(0L);
        return pub;
    }

    /** Checks the registration's answer, then waits for the indexer's subscription. */
    private static void await(ZMQ.Socket pub, int e, Duration wait, LoopbackHttp.Answer registered) throws IOException {
        if (registered.status() != 200 && registered.status() != 201) {
            throw new IOException("POST /register " + e + ": " + registered.status() + " " + json(registered.body()));
        }
        if (pub.recv(0) == null) {
            throw new IOException(
                    "the indexer did not subscribe to " + pub.getLastEndpoint() + " within " + wait.toSeconds() + " s");
        }
    }

    /** One batch from engine {@code e} storing the complete blocks of {@code tokens} on the GPU; returns the blocks. */
    public int store(int e, int[] tokens) {
        long[] all = keys(tokens);
        List<EngineEvent> events = new ArrayList<>();
        Long parent = null;
        for (int from = 0; from < all.length; from += EVENT_BLOCKS) {
            long[] keys = Arrays.copyOfRange(all, from, Math.min(from + EVENT_BLOCKS, all.length));
            int[] blockTokens = Arrays.copyOfRange(tokens, from * BLOCK_SIZE, (from + keys.length) * BLOCK_SIZE);
            events.add(new EngineEvent.Store(keys, parent, blockTokens, BLOCK_SIZE, "GPU", null));
            parent = keys[keys.length - 1];
        }
        send(e, events);
        return all.length;
    }

    /** One batch from engine {@code e} removing the complete blocks of {@code tokens} from the GPU; returns them. */
    public int remove(int e, int[] tokens) {
        long[] keys = keys(tokens);
        send(e, List.of(new EngineEvent.Remove(keys, "GPU")));
        return keys.length;
    }

    /** vLLM's block hashes of the complete blocks of {@code tokens}, of the Conductor's profile. */
    private long[] keys(int[] tokens) {
        VllmBlockHasher.Chain chain = hasher.chain(tokens, BLOCK_SIZE, null, null);
        long[] keys = new long[chain.blocks()];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = chain.nextKey();
        }
        return keys;
    }

    private void send(int e, List<EngineEvent> events) {
        ZMQ.Socket pub = publishers.get(e);
        long seq = sequences.get(e);
        sequences.set(e, seq + 1);
        pub.sendMore(new byte[0]);
        pub.sendMore(LiveFrames.seqFrame(seq));
        pub.send(BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, seq, events, 0));
    }

    /** Dynamo's {@code /query} body of {@code prompt}, JSON. */
    public byte[] dynamoQuery(int[] prompt) {
        JsonArray tokens = new JsonArray(new ArrayList<>(prompt.length));
        for (int t : prompt) {
            tokens.add(t);
        }
        return new JsonObject()
                .put("token_ids", tokens)
                .put("model_name", model)
                .encode()
                .getBytes(StandardCharsets.UTF_8);
    }

    /** The C++ Conductor's query of this model. */
    public byte[] conductorQuery(int[] prompt) {
        return conductorQuery(model, prompt);
    }

    /** The C++ Conductor's query: {@code {"model", "block_size", "token_ids"}}, tokens a bin of LE u32s. */
    public static byte[] conductorQuery(String model, int[] prompt) {
        ByteBuffer tokens = ByteBuffer.allocate(prompt.length * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int t : prompt) {
            tokens.putInt(t);
        }
        return msgpack(p -> {
            p.packMapHeader(3);
            p.packString("model").packString(model);
            p.packString("block_size").packInt(BLOCK_SIZE);
            p.packString("token_ids").packBinaryHeader(tokens.capacity()).writePayload(tokens.array());
        });
    }

    /**
     * Posts {@code body} to {@code /query} until its answer's {@code longest_matched} per instance is
     * {@code expected}; returns that answer's, or throws once {@code wait} has passed.
     */
    public Map<String, Long> awaitMatched(byte[] body, Map<String, Long> expected, Duration wait)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            LoopbackHttp.Answer r = post("/query", body);
            Map<String, Long> matched = r.status() == 200 ? longestMatched(r.body()) : null;
            if (expected.equals(matched)) {
                return matched;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("POST /query answered " + r.status() + " " + json(r.body())
                        + "; expected longest_matched " + expected);
            }
            Thread.sleep(50);
        }
    }

    /** instance id → longest_matched of a /query answer, or null when it has another shape. */
    public static Map<String, Long> longestMatched(byte[] answer) throws IOException {
        Value root = MessagePack.newDefaultUnpacker(answer).unpackValue();
        if (!root.isMapValue()) {
            return null;
        }
        Value instances = root.asMapValue().map().get(ValueFactory.newString("instances"));
        if (instances == null || !instances.isMapValue()) {
            return null;
        }
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<Value, Value> e : instances.asMapValue().map().entrySet()) {
            Value longest = e.getValue().isMapValue()
                    ? e.getValue().asMapValue().map().get(ValueFactory.newString("longest_matched"))
                    : null;
            if (!e.getKey().isStringValue() || longest == null || !longest.isIntegerValue()) {
                return null;
            }
            out.put(
                    e.getKey().asStringValue().asString(),
                    longest.asIntegerValue().toLong());
        }
        return out;
    }

    /** A msgpack POST to the indexer. */
    private LoopbackHttp.Answer post(String path, byte[] body) throws IOException {
        return post(path, body, "application/msgpack");
    }

    private LoopbackHttp.Answer post(String path, byte[] body, String contentType) throws IOException {
        try (LoopbackHttp http = new LoopbackHttp(host, port)) {
            return http.exchange(LoopbackHttp.post(path, contentType, body));
        }
    }

    /** A msgpack answer as JSON text for messages, cut at 500 characters; the bytes as text when not msgpack. */
    private static String json(byte[] answer) {
        String s;
        try {
            s = MessagePack.newDefaultUnpacker(answer).unpackValue().toJson();
        } catch (IOException | RuntimeException e) {
            s = new String(answer, StandardCharsets.UTF_8);
        }
        return s.length() > 500 ? s.substring(0, 500) + "..." : s;
    }

    /** Closes the publishers; the registrations stay with the indexer. */
    @Override
    public void close() {
        zmq.close();
    }

    /** What a request body writes. */
    private interface Body {
        void write(MessagePacker p) throws IOException;
    }

    private static byte[] msgpack(Body body) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            body.write(p);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
