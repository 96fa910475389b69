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
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Mooncake's older G2/G3 object events (docs/protocol/events.md#mooncake-store-events), which no source gives an
 * encoding for: decoded as array events in
 * the documented field order, or as maps with the documented names. Our choices where the documents are silent: an object
 * is a host-pinned block, a parent_block_hash of 0 means none, BlockUpdateEvent changes nothing the index tracks.
 */
class MooncakeObjectEventDecoderTest {
    private static final List<Integer> TOKENS = IntStream.range(0, 4).boxed().toList();
    private static final long[] LOCAL =
            BlockHasher.localHashes(IntStream.range(0, 4).toArray(), 4, BlockHasher.BASE_SEED);

    private static EventBatch decode(Object... events) throws MalformedBatchException {
        return new EngineBatchDecoder(4).decode(1, Pack.batch(null, events));
    }

    @Test
    void blockStoreEventsArePositionalHostPinnedStores() throws Exception {
        List<Object> root = Arrays.asList(
                "BlockStoreEvent", 1.5, "key-1", List.of("10.0.0.1:9000"), 111, 0, TOKENS, 4, "llama", null, -1);
        List<Object> child = Arrays.asList(
                "BlockStoreEvent",
                1.6,
                "key-2",
                List.of(),
                222,
                111,
                IntStream.range(4, 8).boxed().toList(),
                4,
                "llama",
                null,
                -1);
        EventBatch b = decode(root, child);
        assertEquals(0, b.malformedEvents());
        KvEvent.Stored first = assertInstanceOf(KvEvent.Stored.class, b.events().get(0));
        assertEquals(StorageTier.HOST_PINNED, first.tier());
        assertFalse(first.hasParent(), "parent_block_hash 0 is the root");
        assertArrayEquals(new long[] {111}, first.blockHashes());
        assertArrayEquals(LOCAL, first.tokensHashes());
        KvEvent.Stored second =
                assertInstanceOf(KvEvent.Stored.class, b.events().get(1));
        assertEquals(111, second.parentHash());
    }

    @Test
    void theMapFormUpdatesAndRemoveAll() throws Exception {
        Map<String, Object> store = new LinkedHashMap<>();
        store.put("type", "BlockStoreEvent");
        store.put("mooncake_key", "key-1");
        store.put("addr_list", List.of("a"));
        store.put("block_hash", 111);
        store.put("parent_block_hash", 0);
        store.put("token_id", TOKENS);
        store.put("block_size", 4);
        store.put("lora_name", "sql");
        List<Object> update = Arrays.asList("BlockUpdateEvent", 1.7, "key-1", List.of("b"));
        List<Object> removeAll = List.of("RemoveAllEvent");
        EventBatch b = decode(store, update, removeAll);
        assertEquals(0, b.malformedEvents(), "an update is understood, it just changes nothing");
        assertEquals(2, b.events().size());
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b.events().get(0));
        assertArrayEquals(
                BlockHasher.localHashes(IntStream.range(0, 4).toArray(), 4, BlockHasher.seedFor("sql", null)),
                s.tokensHashes(),
                "the object's lora_name seeds its hash");
        assertSame(KvEvent.Cleared.INSTANCE, b.events().get(1));
    }
}
