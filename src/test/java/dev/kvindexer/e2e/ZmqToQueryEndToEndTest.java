package dev.kvindexer.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.metrics.WarningKind;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Real engine bytes over real ZMQ into a real node, answered over real HTTP: vLLM map-era batches (wire vectors
 * V6/V7) and SGLang array-era batches (signed hashes, attn_dp_rank override, CPU_PINNED tier).
 */
class ZmqToQueryEndToEndTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final long V6_H1 = Long.parseUnsignedLong("15760518052499183552");
    private static final long V6_H2 = 2451106649480522483L;

    @RegisterExtension
    final LocalNode indexer = new LocalNode();

    private String query(int tokens) {
        return indexer.http()
                .post(
                        "/query",
                        "{\"model_name\":\"m\",\"token_ids\":"
                                + new JsonArray(
                                        IntStream.range(0, tokens).boxed().toList()) + "}")
                .body();
    }

    @Test
    void vllmMapEraStoreThenRemoveAsVectorsV6V7() {
        try (TestPublisher pub = new TestPublisher()) {
            indexer.register(1, 0, pub);
            pub.publish(
                    "kv@pod-a@m",
                    0,
                    HexFormat.of()
                            .parseHex(
                                    "93cb3ff80000000000009188a474797065ab426c6f636b53746f726564ac626c6f636b5f68617368657392cfdab89baa7b5857c0cf22041482dce26af3b1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473980001020304050607aa626c6f636b5f73697a6504a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c000"));
            String afterV6 = "{\"scores\":{\"1\":{\"0\":8}},\"frequencies\":[],\"instances\":{\"1\":"
                    + "{\"longest_matched\":8,\"gpu\":8,\"dp\":{\"0\":8},\"cpu\":8,\"disk\":8}}}";
            Await.equal("V6 applied", WAIT, afterV6, () -> query(8));
            assertEquals(
                    afterV6,
                    indexer.http()
                            .post(
                                    "/query_by_hash",
                                    "{\"model_name\":\"m\",\"block_hashes\":[9143094415614847814,-6322652565496669421]}")
                            .body());

            pub.publish(
                    "kv@pod-a@m",
                    1,
                    HexFormat.of()
                            .parseHex(
                                    "93cb3ff999999999999a9183a474797065ac426c6f636b52656d6f766564ac626c6f636b5f68617368657391cf22041482dce26af3a66d656469756da347505500"));
            Await.equal(
                    "V7 applied",
                    WAIT,
                    "{\"scores\":{\"1\":{\"0\":4}},\"frequencies\":[],\"instances\":{\"1\":"
                            + "{\"longest_matched\":4,\"gpu\":4,\"dp\":{\"0\":4},\"cpu\":4,\"disk\":4}}}",
                    () -> query(8));

            JsonArray events = new JsonObject(indexer.http().get("/dump").body())
                    .getJsonObject("m:default")
                    .getJsonArray("events");
            assertEquals(1, events.size());
            assertEquals(
                    new JsonObject("{\"worker_id\":1,\"storage_tier\":\"device\",\"event\":{\"event_id\":0,"
                            + "\"data\":{\"stored\":{\"parent_hash\":null,\"blocks\":[{\"block_hash\":15760518052499183552,"
                            + "\"tokens_hash\":9143094415614847814,\"mm_extra_info\":null}]}},\"dp_rank\":0}}"),
                    events.getJsonObject(0));
            assertTrue(
                    indexer.http().get("/dump").body().contains("\"block_hash\":15760518052499183552"),
                    "unsigned in the raw text");
        }
    }

    @Test
    void sglangArrayEraWithRankOverrideLowerTierAndBadFramesInBetween() {
        try (TestPublisher vllm = new TestPublisher();
                TestPublisher sglang = new TestPublisher()) {
            indexer.register(1, 0, vllm);
            indexer.register(2, 0, sglang);
            vllm.publish(
                    "",
                    0,
                    BatchEncoder.batch(
                            BatchEncoder.Format.VLLM_MAP,
                            1.0,
                            List.of(new EngineEvent.Store(
                                    new long[] {V6_H1}, null, new int[] {0, 1, 2, 3}, 4, "GPU", null)),
                            0));

            // Garbage the listener must count and survive: a 2-frame message and an undecodable payload.
            sglang.sendFrames(new byte[0], new byte[8]);
            sglang.publish("", 0, new byte[] {(byte) 0xc1, 0x00});
            // attn_dp_rank 1 overrides the registered rank 0; hashes are negative int64 as SGLang sends them.
            sglang.publish(
                    "",
                    1,
                    BatchEncoder.batch(
                            BatchEncoder.Format.SGLANG_ARRAY,
                            1.0,
                            List.of(new EngineEvent.Store(
                                    new long[] {-5, -6},
                                    null,
                                    IntStream.range(0, 8).toArray(),
                                    4,
                                    "GPU",
                                    null)),
                            1));
            sglang.publish(
                    "",
                    2,
                    BatchEncoder.batch(
                            BatchEncoder.Format.SGLANG_ARRAY,
                            1.1,
                            List.of(new EngineEvent.Store(
                                    new long[] {-7}, -6L, new int[] {8, 9, 10, 11}, 4, "CPU_PINNED", null)),
                            1));

            Await.equal(
                    "both engines applied",
                    WAIT,
                    "{\"scores\":{\"1\":{\"0\":4},\"2\":{\"1\":8}},\"frequencies\":[],"
                            + "\"instances\":{\"1\":{\"longest_matched\":4,\"gpu\":4,\"dp\":{\"0\":4},\"cpu\":4,\"disk\":4},"
                            + "\"2\":{\"longest_matched\":12,\"gpu\":8,\"dp\":{\"1\":8},\"cpu\":12,\"disk\":12}}}",
                    () -> query(12));
            assertEquals(1, indexer.node().counters().warningCount(WarningKind.MALFORMED_FRAME));
            assertEquals(1, indexer.node().counters().warningCount(WarningKind.DECODE_ERROR));
            JsonObject listener = new JsonArray(indexer.http().get("/workers").body())
                    .getJsonObject(1)
                    .getJsonObject("listeners")
                    .getJsonObject("0");
            assertEquals("active", listener.getString("status"));

            // Unregistering worker 2 removes everything it held, including blocks stored under the rank-1 override.
            assertEquals(
                    200,
                    indexer.http()
                            .post("/unregister", "{\"instance_id\":2,\"model_name\":\"m\"}")
                            .statusCode());
            assertEquals(
                    "{\"scores\":{\"1\":{\"0\":4}},\"frequencies\":[],\"instances\":{\"1\":"
                            + "{\"longest_matched\":4,\"gpu\":4,\"dp\":{\"0\":4},\"cpu\":4,\"disk\":4}}}",
                    query(12));
        }
    }

    @Test
    void vectorAEndToEndLeavesNothingAfterStoreRemoveClear() {
        try (TestPublisher pub = new TestPublisher()) {
            indexer.register(1, 0, pub, "a", 16);
            pub.publish(
                    "kv@pod-a@test-model",
                    0,
                    HexFormat.of()
                            .parseHex(
                                    "93cb3ff80000000000009388a474797065ab426c6f636b53746f726564ac626c6f636b5f686173686573920102b1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20aa626c6f636b5f73697a6510a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c083a474797065ac426c6f636b52656d6f766564ac626c6f636b5f6861736865739102a66d656469756da347505581a474797065b0416c6c426c6f636b73436c656172656400"));
            Await.until(
                    "vector A applied", WAIT, () -> indexer.node().counters().appliedCount("cleared", "ok") == 1);
            assertEquals(1, indexer.node().counters().appliedCount("stored", "ok"));
            assertEquals(1, indexer.node().counters().appliedCount("removed", "ok"));
            assertEquals(
                    "{\"scores\":{},\"frequencies\":[],\"instances\":{}}",
                    indexer.http()
                            .post(
                                    "/query",
                                    "{\"model_name\":\"a\",\"token_ids\":"
                                            + new JsonArray(IntStream.rangeClosed(1, 32)
                                                    .boxed()
                                                    .toList()) + "}")
                            .body());
        }
    }
}
