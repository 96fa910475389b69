package dev.kvindexer.selectservice.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.select.AffinityTarget;
import dev.kvindexer.select.SessionBindings;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * Dynamo's {@code AffinityBindingEvent} on topic {@code dynamo.session-affinity.v1}, both ways. The vectors are derived
 * from the struct (partition flattened, then session id, worker, optional rank, sequence, writer) and rmp-serde's
 * named-map rules: fixstr/str8 strings, the smallest unsigned integer form, nil for {@code None}.
 */
class AffinityEventCodecTest {
    private static final PartitionKey P = new PartitionKey("model", "default");
    private static final String HEAD =
            "87aa6d6f64656c5f6e616d65a56d6f64656cad726f7574696e675f67726f7570a764656661756c74"
                    + "aa73657373696f6e5f6964a27331a9776f726b65725f6964";
    /** Session s1 on worker 1 rank 0, sequence 5, writer 42. */
    private static final String RANKED = HEAD + "01a764705f72616e6b00a873657175656e636505a97772697465725f69642a";
    /** Worker 300 (u16), no rank, sequence 1,764,190,000,000,000,000 (u64), writer 2^64 − 1 (u64). */
    private static final String WORKER_ONLY =
            HEAD + "cd012ca764705f72616e6bc0a873657175656e6365cf187ba9753a4be000a97772697465725f6964cfffffffffffffffff";
    /** A 40-byte session id (str8) in model m, group g, on rank 200 (u8). */
    private static final String STR8 = "87aa6d6f64656c5f6e616d65a16dad726f7574696e675f67726f7570a167"
            + "aa73657373696f6e5f6964d928" + "78".repeat(40)
            + "a9776f726b65725f696401a764705f72616e6bccc8a873657175656e636505a97772697465725f69642a";

    private static SessionBindings.Binding binding(
            PartitionKey p, String session, long worker, Integer rank, long sequence, long writer) {
        return new SessionBindings.Binding(
                p, session, new AffinityTarget(worker, rank), new SessionBindings.Version(sequence, writer));
    }

    @Test
    void theVectorsEncodeByteForByteAndDecodeBack() {
        SessionBindings.Binding ranked = binding(P, "s1", 1, 0, 5, 42);
        SessionBindings.Binding workerOnly = binding(P, "s1", 300, null, 1_764_190_000_000_000_000L, -1L);
        SessionBindings.Binding str8 = binding(new PartitionKey("m", "g"), "x".repeat(40), 1, 200, 5, 42);
        assertEquals(RANKED, HexFormat.of().formatHex(AffinityEventCodec.encode(ranked)));
        assertEquals(95, AffinityEventCodec.encode(ranked).length);
        assertEquals(WORKER_ONLY, HexFormat.of().formatHex(AffinityEventCodec.encode(workerOnly)));
        assertEquals(STR8, HexFormat.of().formatHex(AffinityEventCodec.encode(str8)));
        assertEquals(ranked, AffinityEventCodec.decode(HexFormat.of().parseHex(RANKED)));
        assertEquals(workerOnly, AffinityEventCodec.decode(HexFormat.of().parseHex(WORKER_ONLY)));
        assertEquals(str8, AffinityEventCodec.decode(HexFormat.of().parseHex(STR8)));
    }

    @Test
    void decodingIsByNameAndTolerant() {
        // Members reordered, an unknown member, no dp_rank (None), integers wider than needed.
        String reordered = "88" + "a8" + hex("sequence") + "cf0000000000000005"
                + "a9" + hex("writer_id") + "ce0000002a"
                + "a5" + hex("extra") + "92c0a178"
                + "a9" + hex("worker_id") + "cd0001"
                + "aa" + hex("session_id") + "a2" + hex("s1")
                + "ad" + hex("routing_group") + "a7" + hex("default")
                + "aa" + hex("model_name") + "a5" + hex("model")
                + "a7" + hex("dp_rank") + "c0";
        assertEquals(
                binding(P, "s1", 1, null, 5, 42),
                AffinityEventCodec.decode(HexFormat.of().parseHex(reordered)));
    }

    @Test
    void malformedPayloadsAreRefused() {
        byte[] valid = HexFormat.of().parseHex(RANKED);
        for (String bad : new String[] {
            "",
            "c1",
            "90",
            "81a1789100", // no member of a binding
            "87dd7fffffff", // a map key that is an array of 2^31 entries
            "81db7fffffff", // a 2 GiB string
            HEAD.replace("a27331", "a2") // cut inside the session id
        }) {
            assertThrows(
                    IllegalArgumentException.class,
                    () -> AffinityEventCodec.decode(HexFormat.of().parseHex(bad)),
                    bad);
        }
        assertThrows(
                IllegalArgumentException.class,
                () -> AffinityEventCodec.decode(
                        HexFormat.of().parseHex(RANKED.replace("a764705f72616e6b00", "a764705f72616e6bce80000000"))),
                "a rank past the int range");
        assertThrows(
                IllegalArgumentException.class,
                () -> AffinityEventCodec.decode(
                        HexFormat.of().parseHex(RANKED.replace("a9776f726b65725f696401", "a9776f726b65725f6964ff"))),
                "a negative worker id");
        assertEquals(valid.length, AffinityEventCodec.encode(AffinityEventCodec.decode(valid)).length);
    }

    private static String hex(String s) {
        return HexFormat.of().formatHex(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
}
