package dev.kvindexer.conductor.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.conductor.event.CppConductorEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.wire.MalformedBatchException;
import dev.kvindexer.wire.Pack;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The C++ Conductor's event rules (docs/protocol/events.md#c-conductor-events), for both registration types. */
class CppConductorBatchDecoderTest {
    private static final long K0 = 3236607068019569386L;
    private static final String D0 = "202da172482d928bbc42ab25b0151e2b895f13f41002e27b2ceabcfae6d332ea";
    private static final long TS = 1_700_000_000_123L;

    private final CppConductorBatchDecoder engine = CppConductorBatchDecoder.forEngine(0, 16, "", false);
    private final CppConductorBatchDecoder store = CppConductorBatchDecoder.forStore();

    private static Map<String, Object> stored(Object... hashes) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("type", "BlockStored");
        e.put("block_hashes", Arrays.asList(hashes));
        e.put("parent_block_hash", null);
        e.put("token_ids", List.of());
        e.put("block_size", 16);
        e.put("lora_id", null);
        e.put("medium", "GPU");
        e.put("lora_name", null);
        return e;
    }

    private static byte[] engineBatch(Object rank, Object... events) {
        return Pack.of(Arrays.asList(1.5, Arrays.asList(events), rank));
    }

    private static Map<String, Object> object(String type) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("event_id", 1);
        e.put("timestamp", TS);
        e.put("event_type", type);
        e.put("model_name", "test-model");
        e.put("block_size", 16);
        e.put("additional_salt", null);
        e.put("lora_name", null);
        e.put("tenant_id", "default");
        e.put("backend_id", "backend-a");
        e.put("medium", "cpu");
        e.put("dp_rank", 0);
        if (!type.equals("cleared")) {
            e.put("group_id", "0");
            e.put("object_key", "test-model@tp_rank:0@pcp0@dcp0@pp_rank:0@" + D0);
            e.put("connector_block_hash", D0);
            e.put("seq_hashes", List.of(new Pack.U64(K0)));
            e.put("base_block_idx", null);
        }
        if (type.equals("stored")) {
            e.put("parent_hash", null);
            e.put("token_ids", null);
        }
        return e;
    }

    private static byte[] storeBatch(Object... events) {
        return Pack.of(Arrays.asList(TS, Arrays.asList(events), 0));
    }

    @Test
    void gpuBlocksByUintOrByTheLastEightBytesOfABin() throws Exception {
        byte[] digest = new byte[32];
        for (int i = 0; i < 8; i++) {
            digest[24 + i] = (byte) (K0 >>> (56 - 8 * i));
        }
        CppConductorBatchDecoder.Batch b = engine.decode(engineBatch(0, stored(new Pack.U64(K0), digest)));
        assertEquals(0, b.rejected(), b.firstRejection());
        assertArrayEquals(
                new long[] {K0, K0}, ((CppConductorEvent.GpuStored) b.events().get(0)).keys());
    }

    @Test
    void aLoraIdIsRejectedWithoutBlockingItsSibling() throws Exception {
        Map<String, Object> lora = stored(1);
        lora.put("lora_id", 7);
        CppConductorBatchDecoder.Batch b = engine.decode(engineBatch(null, lora, stored(2)));
        assertEquals(1, b.rejected());
        assertTrue(b.firstRejection().contains("lora_id"), b.firstRejection());
        assertArrayEquals(
                new long[] {2}, ((CppConductorEvent.GpuStored) b.events().get(0)).keys());
    }

    @Test
    void aLoraIdIsAcceptedOnlyWhenAskedForAndItsNameIsTheRegistrations() throws Exception {
        Map<String, Object> lora = stored(1);
        lora.put("lora_id", 7);
        lora.put("lora_name", "sql-adapter");
        Map<String, Object> other = stored(2);
        other.put("lora_id", 8);
        other.put("lora_name", "other-adapter");
        byte[] batch = engineBatch(null, lora, other);
        assertEquals(
                2,
                CppConductorBatchDecoder.forEngine(0, 16, "sql-adapter", false)
                        .decode(batch)
                        .rejected(),
                "the reference refuses every lora_id");
        CppConductorBatchDecoder.Batch lenient =
                CppConductorBatchDecoder.forEngine(0, 16, "sql-adapter", true).decode(batch);
        assertEquals(1, lenient.rejected(), lenient.firstRejection());
        assertTrue(lenient.firstRejection().contains("lora_name"), lenient.firstRejection());
        assertArrayEquals(
                new long[] {1}, ((CppConductorEvent.GpuStored) lenient.events().get(0)).keys());
        assertEquals(
                1,
                CppConductorBatchDecoder.forEngine(0, 16, "", true)
                        .decode(engineBatch(null, stored(3)))
                        .events()
                        .size());
        Map<String, Object> baseWithId = stored(4);
        baseWithId.put("lora_id", 7);
        assertEquals(
                1,
                CppConductorBatchDecoder.forEngine(0, 16, "", true)
                        .decode(engineBatch(null, baseWithId))
                        .rejected(),
                "a base-model registration has no adapter a lora_id could name");
    }

    @Test
    void eventsTheRulesRefuseOrIgnore() throws Exception {
        Map<String, Object> cpu = stored(1);
        cpu.put("medium", "cpu");
        Map<String, Object> otherSize = stored(2);
        otherSize.put("block_size", 32);
        Map<String, Object> noParent = stored(3);
        noParent.remove("parent_block_hash");
        Map<String, Object> removedWithTokens = new LinkedHashMap<>(
                Map.of("type", "BlockRemoved", "block_hashes", List.of(4), "medium", "gpu", "token_ids", List.of()));
        Map<String, Object> negative = stored(-5);
        CppConductorBatchDecoder.Batch b = engine.decode(engineBatch(
                0,
                cpu,
                otherSize,
                noParent,
                removedWithTokens,
                negative,
                List.of("BlockStored"),
                Map.of("type", "AllBlocksCleared")));
        assertEquals(List.of(CppConductorEvent.GpuCleared.INSTANCE), b.events(), "a CPU block is ignored, not refused");
        assertEquals(5, b.rejected());
    }

    @Test
    void onlyCacheGroupZeroIsStoredOrRemoved() throws Exception {
        Map<String, Object> otherGroup = stored(1);
        otherGroup.put("group_idx", 1);
        Map<String, Object> groupZero = stored(2);
        groupZero.put("group_idx", 0);
        // A hybrid model's sliding-window group evicting a hash that group 0 still holds.
        Map<String, Object> removedOtherGroup = new LinkedHashMap<>(
                Map.of("type", "BlockRemoved", "block_hashes", List.of(2), "medium", "GPU", "group_idx", 1));
        Map<String, Object> removedOtherGroupOnCpu = new LinkedHashMap<>(
                Map.of("type", "BlockRemoved", "block_hashes", List.of(2), "medium", "cpu", "group_idx", 1));
        Map<String, Object> removedGroupZero = new LinkedHashMap<>(
                Map.of("type", "BlockRemoved", "block_hashes", List.of(2), "medium", "GPU", "group_idx", 0));
        CppConductorBatchDecoder.Batch b = engine.decode(
                engineBatch(0, otherGroup, groupZero, removedOtherGroup, removedOtherGroupOnCpu, removedGroupZero));
        assertEquals(3, b.rejected(), "another group is refused, whatever its medium");
        assertTrue(b.firstRejection().contains("group_idx"), b.firstRejection());
        assertEquals(2, b.events().size());
        assertArrayEquals(
                new long[] {2}, ((CppConductorEvent.GpuStored) b.events().get(0)).keys());
        assertArrayEquals(
                new long[] {2}, ((CppConductorEvent.GpuRemoved) b.events().get(1)).keys());
    }

    @Test
    void aRemovalsBlockHashIsComparedAsTheConductorWritesIt() throws Exception {
        Map<String, Object> removed = object("removed");
        removed.put("connector_block_hash", "0X" + D0.toUpperCase(java.util.Locale.ROOT));
        removed.put("seq_hashes", List.of());
        Map<String, Object> negative = object("removed");
        negative.put("seq_hashes", List.of(-1));
        CppConductorBatchDecoder.Batch b = store.decode(storeBatch(removed, negative));
        assertEquals(1, b.rejected(), "a negative sequence hash");
        CppConductorEvent.ObjectRemoved r =
                (CppConductorEvent.ObjectRemoved) b.events().get(0);
        assertEquals(D0, r.blockHash());
        assertEquals(0, r.seqHashes().length);
    }

    @Test
    void aConnectorBlockHashIsAsciiHex() throws Exception {
        assertEquals(K0, CppConductorBatchDecoder.connectorKey(D0));
        assertEquals(K0, CppConductorBatchDecoder.connectorKey("0x" + D0.toUpperCase(java.util.Locale.ROOT)));
        for (String digits : List.of("\uFF10".repeat(16), "\u0660".repeat(16), "g".repeat(16))) {
            assertThrows(Exception.class, () -> CppConductorBatchDecoder.connectorKey(digits), digits);
        }
    }

    @Test
    void aBatchOfAnotherRankOrShapeIsRefusedWhole() {
        assertThrows(MalformedBatchException.class, () -> engine.decode(engineBatch(1, stored(1))));
        assertThrows(MalformedBatchException.class, () -> engine.decode(Pack.of(List.of(1.5, List.of()))));
        assertThrows(
                MalformedBatchException.class,
                () -> engine.decode(Pack.of(List.of(1, List.of(), 0))),
                "an engine's timestamp is a float");
        assertThrows(
                MalformedBatchException.class,
                () -> store.decode(Pack.of(List.of(1.5, List.of(), 0))),
                "the Store master's is integer milliseconds");
        assertThrows(MalformedBatchException.class, () -> engine.decode(new byte[] {(byte) 0xdd, 0x7f, 0, 0, 0}));
    }

    @Test
    void theStoreMastersObjectEvents() throws Exception {
        CppConductorBatchDecoder.Batch b =
                store.decode(storeBatch(object("stored"), object("removed"), object("cleared")));
        assertEquals(0, b.rejected(), b.firstRejection());
        assertEquals(
                new CppConductorEvent.ObjectStored(
                        "default",
                        "test-model",
                        "",
                        16,
                        "backend-a",
                        "test-model@tp_rank:0@pcp0@dcp0@pp_rank:0@" + D0,
                        StorageTier.HOST_PINNED,
                        K0,
                        D0),
                b.events().get(0));
        CppConductorEvent.ObjectRemoved removed =
                (CppConductorEvent.ObjectRemoved) b.events().get(1);
        assertEquals(D0, removed.blockHash());
        assertArrayEquals(new long[] {K0}, removed.seqHashes());
        assertEquals(
                new CppConductorEvent.ObjectsCleared("backend-a", "default"),
                b.events().get(2));
    }

    @Test
    void storeEventsTheRulesRefuseOrIgnore() throws Exception {
        Map<String, Object> gpu = object("stored");
        gpu.put("medium", "gpu");
        Map<String, Object> late = object("stored");
        late.put("timestamp", TS + 1);
        Map<String, Object> otherKey = object("stored");
        otherKey.put("seq_hashes", List.of(1));
        Map<String, Object> shortHash = object("stored");
        shortHash.put("connector_block_hash", "0xabc");
        Map<String, Object> prefixed = object("stored");
        prefixed.put("connector_block_hash", "0X" + D0);
        prefixed.put("seq_hashes", List.of());
        Map<String, Object> removedWithParent = object("removed");
        removedWithParent.put("parent_hash", null);
        CppConductorBatchDecoder.Batch b =
                store.decode(storeBatch(gpu, late, otherKey, shortHash, prefixed, removedWithParent));
        assertEquals(4, b.rejected());
        assertEquals(1, b.events().size(), "a GPU medium is ignored; the 0X-prefixed hash with no seq_hashes passes");
        assertEquals(K0, ((CppConductorEvent.ObjectStored) b.events().get(0)).key());
    }
}
