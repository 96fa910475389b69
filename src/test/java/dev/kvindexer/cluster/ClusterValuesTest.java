package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.ingest.Publisher;
import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.registry.InstanceIds;
import dev.kvindexer.registry.RegisterRequest;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * What nodes read from each other is checked like an HTTP body and, with a token, must be signed with it: a refused
 * value reads as null (or false), and is counted by source and reason.
 */
class ClusterValuesTest {
    private static final RegisterRequest DYNAMO =
            new RegisterRequest(-1L, 3, "tcp://h:5557", null, new PartitionKey("m", "default"), 16);
    private static final RegisterRequest MOONCAKE = new RegisterRequest(
            InstanceIds.of("vllm-prefill-node1"),
            0,
            "tcp://h:5557",
            "tcp://h:5558",
            new PartitionKey("deepseek", "acme"),
            128,
            new Publisher("vllm-prefill-node1", "vLLM", "sql-adapter", "w8a8", "http://10.0.0.1:30000"));

    private final ClusterCounters counters = new ClusterCounters();
    private final ClusterValues open = new ClusterValues(null, counters);
    private final ClusterValues signed = new ClusterValues("s3cret", counters);

    private static String key(RegisterRequest r) {
        return ClusterValues.key(r.workerId(), r.dpRank());
    }

    @Test
    void dynamoAndMooncakeRegistrationsRoundTripSignedOrNot() {
        for (ClusterValues v : List.of(open, signed)) {
            assertEquals(DYNAMO, v.registration(key(DYNAMO), v.registration(DYNAMO)));
            assertEquals(MOONCAKE, v.registration(key(MOONCAKE), v.registration(MOONCAKE)));
        }
        assertEquals("18446744073709551615:3", key(DYNAMO));
        assertEquals(Map.of(), counters.rejectedSnapshot());
    }

    /** Each change to a valid stored registration that /register would refuse, or that contradicts its key. */
    @Test
    void registrationsARegisterBodyWouldRefuseAreIgnoredAndCounted() {
        Map<String, Consumer<JsonObject>> breakages = Map.ofEntries(
                Map.entry("endpoint without port", o -> o.put("endpoint", "tcp://h")),
                Map.entry("endpoint of another scheme", o -> o.put("endpoint", "http://h:1")),
                Map.entry("replay endpoint invalid", o -> o.put("replay_endpoint", "tcp://:5")),
                Map.entry("block size 0", o -> o.put("block_size", 0)),
                Map.entry("block size negative", o -> o.put("block_size", -16)),
                Map.entry("block size not a number", o -> o.put("block_size", "16")),
                Map.entry("dp_rank of another key", o -> o.put("dp_rank", 4)),
                Map.entry("instance of another key", o -> o.put("instance_id", "7")),
                Map.entry("instance id not canonical", o -> o.put("instance_id", "018446744073709551615")),
                Map.entry("model missing", o -> o.remove("model_name")),
                Map.entry("tenant a number", o -> o.put("tenant_id", 5)),
                Map.entry("unknown publisher type", o -> o.put("type", "tgi")),
                Map.entry("name of another id", o -> o.put("instance_name", "someone-else")));
        String valid = open.registration(DYNAMO);
        breakages.forEach((what, breakage) -> {
            JsonObject o = new JsonObject(valid);
            breakage.accept(o);
            assertNull(open.registration(key(DYNAMO), o.encode()), what);
        });
        assertNull(open.registration(key(DYNAMO), "{not json"));
        assertNull(open.registration(key(DYNAMO), "[1,2]"));
        assertNull(open.registration(key(DYNAMO), 42), "not a string");
        assertNull(open.registration(key(DYNAMO), " ".repeat(ClusterValues.MAX_VALUE_CHARS) + valid), "too long");
        for (String badKey : List.of("3", "a:3", "18446744073709551616:3", "1:2147483648", "01:3", "1:-1", "1:3:4")) {
            assertNull(open.registration(badKey, valid), badKey);
        }
        assertEquals(
                breakages.size() + 4 + 7, counters.rejectedCount(ClusterValues.REGISTRATIONS, ClusterValues.INVALID));
    }

    @Test
    void withATokenUnsignedAndBadlySignedValuesAreIgnoredAndCountedApart() {
        String unsigned = open.registration(DYNAMO);
        assertNull(signed.registration(key(DYNAMO), unsigned));
        String otherToken = new ClusterValues("another", counters).registration(DYNAMO);
        assertNull(signed.registration(key(DYNAMO), otherToken));
        JsonObject tampered = new JsonObject(signed.registration(DYNAMO)).put("endpoint", "tcp://evil:5557");
        assertNull(signed.registration(key(DYNAMO), tampered.encode()), "the signature covers every field");
        String movedKey = ClusterValues.key(-1L, 4);
        JsonObject moved = new JsonObject(signed.registration(DYNAMO)).put("dp_rank", 4);
        assertNull(signed.registration(movedKey, moved.encode()), "nor can a value move to another key");
        JsonObject notHex = new JsonObject(signed.registration(DYNAMO)).put("sig", "zz");
        assertNull(signed.registration(key(DYNAMO), notHex.encode()));
        assertEquals(1, counters.rejectedCount(ClusterValues.REGISTRATIONS, ClusterValues.UNSIGNED));
        assertEquals(4, counters.rejectedCount(ClusterValues.REGISTRATIONS, ClusterValues.BAD_SIGNATURE));
        assertEquals(DYNAMO, open.registration(key(DYNAMO), otherToken), "a node without a token checks no signature");
    }

    @Test
    void tombstonesAndAnnouncementsAreCheckedAndSignedToo() {
        assertTrue(signed.tombstone("5:0", signed.tombstone("5:0", 1234L)));
        assertFalse(signed.tombstone("6:0", signed.tombstone("5:0", 1234L)), "another key's tombstone");
        assertFalse(signed.tombstone("5:0", open.tombstone("5:0", 1234L)));
        assertFalse(open.tombstone("5:0", "{\"unregistered_at\":-1}"));
        assertEquals("5:0", signed.announced(signed.announcement("5:0")));
        assertNull(signed.announced(open.announcement("5:0")));
        assertNull(open.announced(open.announcement("5:x")));
        assertNull(open.announced(new JsonObject().put("key", "5:0")), "not a string body");
        assertEquals(1, counters.rejectedCount(ClusterValues.TOMBSTONES, ClusterValues.BAD_SIGNATURE));
        assertEquals(1, counters.rejectedCount(ClusterValues.TOMBSTONES, ClusterValues.UNSIGNED));
        assertEquals(1, counters.rejectedCount(ClusterValues.TOMBSTONES, ClusterValues.INVALID));
        assertEquals(1, counters.rejectedCount(ClusterValues.ANNOUNCEMENTS, ClusterValues.UNSIGNED));
        assertEquals(2, counters.rejectedCount(ClusterValues.ANNOUNCEMENTS, ClusterValues.INVALID));
    }

    /** A member's URL receives the node's bearer token during recovery: only a plain http(s) URL of a host passes. */
    @Test
    void memberEntriesNeedAPlainHttpUrlAndTheirNodesSignature() {
        String node = "6f1c1d52-1111-4a4a-9b9b-0123456789ab";
        ClusterValues.Member ok = new ClusterValues.Member("https://10.0.0.7:8090/indexer", true);
        assertEquals(ok, signed.member(node, signed.member(node, ok.url(), true)));
        for (String url : List.of(
                "file:///etc/passwd",
                "http://",
                "http://user:pw@h:1",
                "http://h:1/?q=1",
                "http://h:1/#x",
                "http://h:0",
                "gopher://h:70",
                "http://h:1/" + "a".repeat(ClusterValues.MAX_URL_CHARS))) {
            assertNull(open.member(node, open.member(node, url, true)), url);
        }
        assertNull(open.member(node, "{\"url\":\"http://h:1\",\"ready\":\"yes\"}"));
        assertNull(open.member("../etc", open.member("../etc", "http://h:1", true)));
        assertNull(signed.member(node, open.member(node, ok.url(), true)));
        assertNull(signed.member("another-node", signed.member(node, ok.url(), true)));
        assertEquals(10, counters.rejectedCount(ClusterValues.MEMBERS, ClusterValues.INVALID));
        assertEquals(1, counters.rejectedCount(ClusterValues.MEMBERS, ClusterValues.UNSIGNED));
        assertEquals(1, counters.rejectedCount(ClusterValues.MEMBERS, ClusterValues.BAD_SIGNATURE));
    }
}
