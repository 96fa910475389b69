package dev.kvindexer.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Standardized KV events (docs/protocol/events.md#standardized-kv-events) as msgpack maps inside an ordinary ZMQ batch
 * (docs/protocol/events.md#standardized-events-into-index-operations).
 */
class StandardEventDecoderTest {
    private static Map<String, Object> envelope(String type) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("event_id", 42);
        m.put("timestamp", 1739145600000L);
        m.put("event_type", type);
        m.put("model_name", "llama-3.1-8b");
        m.put("block_size", null);
        m.put("additional_salt", null);
        m.put("lora_name", null);
        m.put("tenant_id", "default");
        m.put("backend_id", "worker-0");
        m.put("medium", "cpu");
        m.put("dp_rank", 0);
        return m;
    }

    @Test
    void storedRemovedAndClearedDecodeIntoTheSameOperationsAsVllmEvents() throws Exception {
        Map<String, Object> stored = envelope("stored");
        stored.put("seq_hashes", List.of(new Pack.U64(Long.parseUnsignedLong("18446744073709551610")), 2));
        stored.put("base_block_idx", 5);
        stored.put("parent_hash", 9);
        stored.put("token_ids", IntStream.range(0, 8).boxed().toList());
        Map<String, Object> removed = envelope("removed");
        removed.put("seq_hashes", List.of(2));
        removed.put("medium", "DISK");
        Map<String, Object> cleared = envelope("cleared");

        EventBatch b = new EngineBatchDecoder(4).decode(3, Pack.batch(null, stored, removed, cleared));
        assertEquals(0, b.malformedEvents());
        assertEquals(3, b.events().size());
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b.events().get(0));
        assertEquals(StorageTier.HOST_PINNED, s.tier(), "lower-case medium");
        assertArrayEquals(new long[] {-6L, 2}, s.blockHashes(), "seq_hashes are the blocks' engine hashes");
        assertEquals(9, s.parentHash());
        assertArrayEquals(
                BlockHasher.localHashes(IntStream.range(0, 8).toArray(), 4, BlockHasher.BASE_SEED),
                s.tokensHashes(),
                "a null block_size is the partition's; tokens are hashed like any event's");
        KvEvent.Removed r = assertInstanceOf(KvEvent.Removed.class, b.events().get(1));
        assertEquals(StorageTier.DISK, r.tier());
        assertArrayEquals(new long[] {2}, r.blockHashes());
        assertSame(KvEvent.Cleared.INSTANCE, b.events().get(2));
    }

    /**
     * Standardized events (docs/protocol/events.md#standardized-events-into-index-operations): without token_ids the
     * seq_hashes place the blocks; a depth without a parent places nothing.
     */
    @Test
    void storedWithoutTokensIsPlacedBySequenceHashUnlessItHasADepthButNoParent() throws Exception {
        Map<String, Object> tokenless = envelope("stored");
        tokenless.put("seq_hashes", List.of(7, 8));
        tokenless.put("base_block_idx", 3);
        tokenless.put("parent_hash", 6);
        Map<String, Object> emptyTokens = new LinkedHashMap<>(tokenless);
        emptyTokens.put("token_ids", List.of());
        emptyTokens.put("parent_hash", null);
        emptyTokens.put("base_block_idx", 0);
        Map<String, Object> orphan = new LinkedHashMap<>(tokenless);
        orphan.put("parent_hash", null);
        EventBatch b = new EngineBatchDecoder(4).decode(3, Pack.batch(null, tokenless, emptyTokens, orphan));
        assertEquals(1, b.malformedEvents(), "base_block_idx 3 and no parent_hash");
        assertEquals(2, b.events().size());
        KvEvent.StoredBySequence below =
                assertInstanceOf(KvEvent.StoredBySequence.class, b.events().get(0));
        assertEquals(StorageTier.HOST_PINNED, below.tier());
        assertEquals(6, below.parentHash());
        assertArrayEquals(new long[] {7, 8}, below.sequenceHashes());
        KvEvent.StoredBySequence atRoot =
                assertInstanceOf(KvEvent.StoredBySequence.class, b.events().get(1));
        assertFalse(atRoot.hasParent(), "an empty token_ids is no tokens");
        assertArrayEquals(new long[] {7, 8}, atRoot.sequenceHashes());
    }

    @Test
    void anUnknownEventTypeOrAWrongBlockSizeSkipsOnlyThatEvent() throws Exception {
        Map<String, Object> odd = envelope("evicted");
        Map<String, Object> wrongSize = envelope("stored");
        wrongSize.put("block_size", 16);
        wrongSize.put("seq_hashes", List.of(1));
        wrongSize.put("parent_hash", null);
        wrongSize.put("token_ids", IntStream.range(0, 16).boxed().toList());
        EventBatch b = new EngineBatchDecoder(4).decode(3, Pack.batch(null, odd, wrongSize, envelope("cleared")));
        assertEquals(1, b.malformedEvents());
        assertEquals(1, b.blockSizeMismatches());
        assertEquals(List.of(KvEvent.Cleared.INSTANCE), b.events());
        assertFalse(b.events().isEmpty());
    }
}
