package dev.kvindexer.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.support.Await;
import dev.kvindexer.support.LocalNode;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.value.Value;

/**
 * Simulated engines of the C++ Conductor's kind ({@code --hash-kind sha256-cbor}): they register through its msgpack
 * API with its hash profile, and the Conductor's own {@code /query}, which recomputes vLLM's block hashes from the
 * tokens, finds the blocks they published.
 */
class SimulatedConductorEnginesTest {
    @RegisterExtension
    final LocalNode indexer = new LocalNode();

    @Test
    void theConductorsQueryFindsWhatTheEnginesPublished() throws Exception {
        SimulationConfig config = QuietSimulations.of(
                2,
                1,
                EngineHashKind.SHA256_CBOR,
                40,
                100,
                URI.create("http://127.0.0.1:" + indexer.node().httpPort()));
        try (Simulation sim = Simulation.start(config)) {
            sim.registerAll();
            for (SimulatedEngine e : sim.engines()) {
                assertTrue(e.awaitSubscribers(1, Await.PATIENCE), "the node subscribed to " + e.endpoint());
            }
            int[] first;
            try (PromptSource prompts = sim.openPrompts()) {
                first = prompts.next();
            }
            sim.run(sim.openPrompts());
            byte[] query = query(first);
            Await.until("the Conductor's /query finds the first prompt", Await.PATIENCE, () -> {
                Map<String, Long> matched =
                        longestMatched(indexer.http().postBytes("/query", query, "application/msgpack"));
                return matched.values().stream().anyMatch(tokens -> tokens >= 16);
            });
            Map<String, Long> matched =
                    longestMatched(indexer.http().postBytes("/query", query, "application/msgpack"));
            assertEquals(2, matched.size(), "both engines are instances of the Conductor's context: " + matched);
            assertTrue(matched.containsKey("100") && matched.containsKey("101"), matched.toString());
        }
    }

    private static byte[] query(int[] tokens) throws Exception {
        ByteBuffer bin = ByteBuffer.allocate(tokens.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int t : tokens) {
            bin.putInt(t);
        }
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(3);
            p.packString("model").packString("m");
            p.packString("block_size").packInt(16);
            p.packString("token_ids").packBinaryHeader(bin.capacity()).writePayload(bin.array());
            return p.toByteArray();
        }
    }

    /** instance id → longest_matched of a Conductor /query answer. */
    private static Map<String, Long> longestMatched(HttpResponse<byte[]> r) {
        Map<String, Long> out = new HashMap<>();
        if (r.statusCode() != 200) {
            return out;
        }
        try {
            Value root = MessagePack.newDefaultUnpacker(r.body()).unpackValue();
            Value instances = root.asMapValue().map().get(org.msgpack.value.ValueFactory.newString("instances"));
            instances
                    .asMapValue()
                    .map()
                    .forEach((k, v) -> out.put(
                            k.asStringValue().asString(),
                            v.asMapValue()
                                    .map()
                                    .get(org.msgpack.value.ValueFactory.newString("longest_matched"))
                                    .asIntegerValue()
                                    .toLong()));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        return out;
    }
}
