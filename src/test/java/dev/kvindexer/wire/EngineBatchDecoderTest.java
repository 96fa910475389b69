package dev.kvindexer.wire;

import static dev.kvindexer.wire.WireVectors.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

/** Decoding of the wire vectors (docs/protocol/events.md#wire-test-vectors) and the filter, conversion and tolerance
 * rules (docs/protocol/events.md#hybrid-model-group-filter to docs/protocol/events.md#tolerance-rules). */
class EngineBatchDecoderTest {
    private static final long HV13_0 = Long.parseUnsignedLong("16863443419780771464");
    private static final long HV13_1 = Long.parseUnsignedLong("2287610619914608821");
    private static final long[] HV5 = {
        Long.parseUnsignedLong("9143094415614847814"), Long.parseUnsignedLong("12124091508212882195")
    };

    private static long u(String s) {
        return Long.parseUnsignedLong(s);
    }

    private static EventBatch decode(int bs, String hex) throws MalformedBatchException {
        return new EngineBatchDecoder(bs).decode(7, bytes(hex));
    }

    private static EventBatch decodeEvent(int bs, String hex) throws MalformedBatchException {
        return new EngineBatchDecoder(bs).decodeSingleEvent(7, bytes(hex));
    }

    private static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    private static List<Object> list(Object... items) {
        return Arrays.asList(items);
    }

    private static List<Object> range(int from, int toInclusive) {
        return IntStream.rangeClosed(from, toInclusive)
                .boxed()
                .map(i -> (Object) i)
                .toList();
    }

    /** A map-era BlockStored of tokens 0..(4n-1), block size 4, with extra fields. */
    private static Map<String, Object> stored(List<Object> hashes, Object... extra) {
        Map<String, Object> m = map(
                "type",
                "BlockStored",
                "block_hashes",
                hashes,
                "parent_block_hash",
                null,
                "token_ids",
                range(0, 4 * hashes.size() - 1),
                "block_size",
                4,
                "lora_id",
                null,
                "medium",
                "GPU",
                "lora_name",
                null);
        for (int i = 0; i < extra.length; i += 2) {
            m.put((String) extra[i], extra[i + 1]);
        }
        return m;
    }

    private static Map<String, Object> removed(List<Object> hashes, Object... extra) {
        Map<String, Object> m = map("type", "BlockRemoved", "block_hashes", hashes, "medium", "GPU");
        for (int i = 0; i < extra.length; i += 2) {
            m.put((String) extra[i], extra[i + 1]);
        }
        return m;
    }

    private static void assertUnsigned(long[] expected, long[] actual) {
        assertArrayEquals(
                Arrays.stream(expected).mapToObj(Long::toUnsignedString).toArray(),
                Arrays.stream(actual).mapToObj(Long::toUnsignedString).toArray());
    }

    private static void assertNoCounts(EventBatch b) {
        assertEquals(0, b.malformedEvents(), "malformed");
        assertEquals(0, b.blockSizeMismatches(), "mismatches");
        assertEquals(0, b.filteredEvents(), "filtered");
    }

    /** The logical batch every vector A–F encodes, decoded with partition block size 16. */
    private static void assertCommonBatch(EventBatch b, int expectedRank) {
        assertEquals(7, b.seq());
        assertEquals(expectedRank, b.dpRank());
        assertNoCounts(b);
        assertEquals(3, b.events().size());
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b.events().get(0));
        assertEquals(StorageTier.DEVICE, s.tier());
        assertFalse(s.hasParent());
        assertArrayEquals(new long[] {1, 2}, s.blockHashes());
        assertUnsigned(new long[] {HV13_0, HV13_1}, s.tokensHashes());
        KvEvent.Removed r = assertInstanceOf(KvEvent.Removed.class, b.events().get(1));
        assertEquals(StorageTier.DEVICE, r.tier());
        assertArrayEquals(new long[] {2}, r.blockHashes());
        assertSame(KvEvent.Cleared.INSTANCE, b.events().get(2));
    }

    @Test
    void vectorLengthsMatchSpec() {
        assertEquals(221, bytes(WireVectors.A).length);
        assertEquals(114, bytes(WireVectors.B).length);
        assertEquals(108, bytes(WireVectors.C).length);
        assertEquals(99, bytes(WireVectors.D).length);
        assertEquals(210, bytes(WireVectors.F).length);
        assertEquals(67, bytes(WireVectors.G).length);
        assertEquals(78, bytes(WireVectors.H).length);
        assertEquals(173, bytes(WireVectors.I).length);
        assertEquals(59, bytes(WireVectors.V1).length);
        assertEquals(60, bytes(WireVectors.V2).length);
        assertEquals(131, bytes(WireVectors.V3).length);
        assertEquals(50, bytes(WireVectors.V4).length);
        assertEquals(34, bytes(WireVectors.V5).length);
        assertEquals(143, bytes(WireVectors.V6).length);
        assertEquals(65, bytes(WireVectors.V7).length);
        assertEquals(12, bytes(WireVectors.V8).length);
    }

    @Test
    void vectorA_vllmMapEvents() throws Exception {
        assertCommonBatch(decode(16, WireVectors.A), 0);
    }

    @Test
    void vectorB_vllmFullArrayEra() throws Exception {
        assertCommonBatch(decode(16, WireVectors.B), 0);
    }

    @Test
    void vectorC_mediumEraAndSglangArrays() throws Exception {
        assertCommonBatch(decode(16, WireVectors.C), 0);
    }

    @Test
    void vectorD_v090WithoutRankOrMedium() throws Exception {
        EventBatch b = decode(16, WireVectors.D);
        assertCommonBatch(b, EventBatch.NO_RANK);
        assertEquals(3, b.effectiveRank(3));
    }

    @Test
    void vectorF_sglangMapEvents() throws Exception {
        assertCommonBatch(decode(16, WireVectors.F), 0);
    }

    @Test
    void vectorG_largeHashes() throws Exception {
        EventBatch b = decodeEvent(16, WireVectors.G);
        assertNoCounts(b);
        KvEvent.Removed r = assertInstanceOf(KvEvent.Removed.class, b.events().get(0));
        assertEquals(StorageTier.DEVICE, r.tier());
        assertUnsigned(new long[] {u("15760518052499183552"), Long.MAX_VALUE, 255, 256}, r.blockHashes());
        assertEquals(-2686226021210368064L, r.blockHashes()[0]);
    }

    @Test
    void vectorH_binHash() throws Exception {
        EventBatch b = decodeEvent(16, WireVectors.H);
        KvEvent.Removed r = assertInstanceOf(KvEvent.Removed.class, b.events().get(0));
        assertArrayEquals(new long[] {1736447835066146335L}, r.blockHashes());
    }

    @Test
    void vectorI_optionalFieldsKeptByFilter() throws Exception {
        EventBatch b = decodeEvent(1, WireVectors.I);
        assertNoCounts(b);
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b.events().get(0));
        assertArrayEquals(new long[] {1}, s.blockHashes());
        // "uuid-A" is no multimodal digest: plain token hash
        assertArrayEquals(new long[] {BlockHasher.hashTokens(new int[] {1}, 0, 1, 1337)}, s.tokensHashes());
    }

    @Test
    void vectorV1_signedHashesCpuPinnedRankOverride() throws Exception {
        EventBatch b = decode(4, WireVectors.V1);
        assertNoCounts(b);
        assertEquals(1, b.dpRank());
        assertEquals(1, b.effectiveRank(0));
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b.events().get(0));
        assertEquals(StorageTier.HOST_PINNED, s.tier());
        assertFalse(s.hasParent());
        assertUnsigned(new long[] {u("16863443419780771464"), u("18446744073709551614")}, s.blockHashes());
        assertUnsigned(HV5, s.tokensHashes());
    }

    @Test
    void vectorV2_sglangMetadataSalt() throws Exception {
        EventBatch b = decode(4, WireVectors.V2);
        assertNoCounts(b);
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b.events().get(0));
        assertUnsigned(new long[] {u("18446744073709551611")}, s.blockHashes());
        assertUnsigned(new long[] {u("17009624042690211646")}, s.tokensHashes());
    }

    @Test
    void vectorV3_topLevelCacheSalt() throws Exception {
        EventBatch b = decode(4, WireVectors.V3);
        assertNoCounts(b);
        assertEquals(0, b.dpRank());
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b.events().get(0));
        assertUnsigned(new long[] {u("18446744073709551611")}, s.blockHashes());
        assertUnsigned(new long[] {u("17009624042690211646")}, s.tokensHashes());
    }

    @Test
    void vectorV4_loraName() throws Exception {
        EventBatch b = decode(4, WireVectors.V4);
        assertNoCounts(b);
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b.events().get(0));
        assertArrayEquals(new long[] {7}, s.blockHashes());
        assertUnsigned(new long[] {u("6665157333201000639")}, s.tokensHashes());
    }

    @Test
    void vectorV5_eagleBigrams() throws Exception {
        EventBatch b = decodeEvent(2, WireVectors.V5);
        assertNoCounts(b);
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b.events().get(0));
        assertArrayEquals(new long[] {11, 12}, s.blockHashes());
        assertUnsigned(new long[] {u("5959138341449004422"), u("13917772031453556700")}, s.tokensHashes());
    }

    @Test
    void vectorsV6V7_storeThenRemove() throws Exception {
        EngineBatchDecoder d = new EngineBatchDecoder(4);
        EventBatch b6 = d.decode(0, bytes(WireVectors.V6));
        assertNoCounts(b6);
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b6.events().get(0));
        assertUnsigned(new long[] {u("15760518052499183552"), u("2451106649480522483")}, s.blockHashes());
        assertUnsigned(HV5, s.tokensHashes());
        EventBatch b7 = d.decode(1, bytes(WireVectors.V7));
        assertEquals(1, b7.seq());
        KvEvent.Removed r = assertInstanceOf(KvEvent.Removed.class, b7.events().get(0));
        assertArrayEquals(new long[] {u("2451106649480522483")}, r.blockHashes());
    }

    @Test
    void vectorV8_emptyBatch() throws Exception {
        EventBatch b = decode(16, WireVectors.V8);
        assertNoCounts(b);
        assertEquals(0, b.dpRank());
        assertTrue(b.events().isEmpty());
    }

    @Test
    void blockSizeMismatchSkipsOnlyTheStore() throws Exception {
        EventBatch b = decode(4, WireVectors.A);
        assertEquals(1, b.blockSizeMismatches());
        assertEquals(0, b.malformedEvents());
        assertEquals(2, b.events().size());
        assertInstanceOf(KvEvent.Removed.class, b.events().get(0));
        assertSame(KvEvent.Cleared.INSTANCE, b.events().get(1));
    }

    @Test
    void malformedEventIsSkippedRestApplies() throws Exception {
        Map<String, Object> badTokens = stored(list(1));
        badTokens.put("token_ids", list(0, 1, "two", 3));
        Map<String, Object> negativeToken = stored(list(2));
        negativeToken.put("token_ids", list(0, 1, -2, 3));
        Map<String, Object> bigToken = stored(list(3));
        bigToken.put("token_ids", list(0, 1, 1L << 32, 3));
        Map<String, Object> badHash = removed(list(1.5));
        byte[] payload = Pack.batch(
                0,
                badTokens,
                removed(list(9)),
                negativeToken,
                bigToken,
                badHash,
                list("Unknown", 1),
                42,
                list(),
                map("block_hashes", list(1)),
                list("BlockStored", list(1), null, range(0, 3), 4));
        EventBatch b = new EngineBatchDecoder(4).decode(1, payload);
        assertEquals(8, b.malformedEvents());
        assertEquals(2, b.events().size());
        assertArrayEquals(new long[] {9}, ((KvEvent.Removed) b.events().get(0)).blockHashes());
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b.events().get(1));
        assertArrayEquals(new long[] {HV5[0]}, s.tokensHashes());
    }

    @Test
    void duplicateOrSelfReferencingStoreIsCountedNoOp() throws Exception {
        Map<String, Object> dup = stored(list(5, 6, 5));
        Map<String, Object> self = stored(list(5, 6));
        self.put("parent_block_hash", 6);
        Map<String, Object> ok = stored(list(5, 6));
        ok.put("parent_block_hash", 4);
        EventBatch b = new EngineBatchDecoder(4).decode(1, Pack.batch(0, dup, self, ok));
        assertEquals(2, b.malformedEvents());
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b.events().get(0));
        assertTrue(s.hasParent());
        assertEquals(4, s.parentHash());
        assertUnsigned(HV5, s.tokensHashes());
    }

    @Test
    void duplicateDetectionOnLargeEvents() throws Exception {
        List<Object> hashes = new java.util.ArrayList<>(
                IntStream.range(0, 100).boxed().map(i -> (Object) (i + 1000)).toList());
        EventBatch ok = new EngineBatchDecoder(4).decode(1, Pack.batch(0, stored(hashes)));
        assertEquals(100, ((KvEvent.Stored) ok.events().get(0)).size());
        hashes.set(99, 1000);
        EventBatch dup = new EngineBatchDecoder(4).decode(1, Pack.batch(0, stored(hashes)));
        assertEquals(1, dup.malformedEvents());
        assertTrue(dup.events().isEmpty());
    }

    @Test
    void shortTokenIdsKeepOnlyCompleteBlocks() throws Exception {
        Map<String, Object> ev = stored(list(1, 2, 3));
        ev.put("token_ids", range(0, 9)); // 2.5 blocks
        Map<String, Object> none = stored(list(4));
        none.put("token_ids", null);
        EventBatch b = new EngineBatchDecoder(4).decode(1, Pack.batch(0, ev, none));
        assertNoCounts(b);
        assertEquals(1, b.events().size());
        KvEvent.Stored s = (KvEvent.Stored) b.events().get(0);
        assertArrayEquals(new long[] {1, 2}, s.blockHashes());
        assertUnsigned(HV5, s.tokensHashes());
    }

    @Test
    void groupFilterReferenceCases() throws Exception {
        EventBatch b = new EngineBatchDecoder(4)
                .decode(
                        1,
                        Pack.batch(
                                0,
                                stored(list(1), "group_idx", 0),
                                stored(list(2)),
                                stored(list(3), "group_idx", 1),
                                stored(list(4), "group_idx", 3, "kv_cache_spec_kind", "full_attention"),
                                stored(list(5), "group_idx", 0, "kv_cache_spec_kind", "mamba"),
                                stored(list(6), "kv_cache_spec_kind", "mla_attention"),
                                stored(list(7), "kv_cache_spec_kind", "sliding_window")));
        assertEquals(3, b.filteredEvents());
        assertArrayEquals(
                new long[] {1, 2, 4, 6},
                b.events().stream()
                        .mapToLong(e -> ((KvEvent.Stored) e).blockHashes()[0])
                        .toArray());
    }

    @Test
    void groupFilterArrayEraTrailingFields() throws Exception {
        // vLLM after #40984: [tag, hashes, parent, tokens, bs, lora_id, medium, lora_name, extra_keys, group_idx, kind,
        // window]
        Object kept =
                list("BlockStored", list(1), null, range(0, 3), 4, null, "GPU", null, null, 2, "full_attention", null);
        Object dropped =
                list("BlockStored", list(2), null, range(0, 3), 4, null, "GPU", null, null, 6, "sliding_window", 128);
        Object droppedByIdx = list("BlockStored", list(3), null, range(0, 3), 4, null, "GPU", null, null, 1);
        Object removedLearned = list("BlockRemoved", list(1), "GPU", 2);
        Object removedUnknown = list("BlockRemoved", list(9), "GPU", 5);
        Object removedZero = list("BlockRemoved", list(8), "GPU", 0);
        EventBatch b = new EngineBatchDecoder(4)
                .decode(1, Pack.batch(0, kept, dropped, droppedByIdx, removedLearned, removedUnknown, removedZero));
        assertEquals(3, b.filteredEvents());
        assertEquals(0, b.malformedEvents());
        assertEquals(3, b.events().size());
        assertInstanceOf(KvEvent.Stored.class, b.events().get(0));
        assertArrayEquals(new long[] {1}, ((KvEvent.Removed) b.events().get(1)).blockHashes());
        assertArrayEquals(new long[] {8}, ((KvEvent.Removed) b.events().get(2)).blockHashes());
    }

    @Test
    void removalsUseKindsLearnedPerRankAcrossBatches() throws Exception {
        EngineBatchDecoder d = new EngineBatchDecoder(4);
        d.decode(
                1,
                Pack.batch(
                        0,
                        stored(list(1), "group_idx", 3, "kv_cache_spec_kind", "full_attention"),
                        stored(list(2), "group_idx", 0, "kv_cache_spec_kind", "mamba")));
        EventBatch rank0 =
                d.decode(2, Pack.batch(0, removed(list(1), "group_idx", 3), removed(list(2), "group_idx", 0)));
        assertEquals(1, rank0.filteredEvents());
        assertArrayEquals(new long[] {1}, ((KvEvent.Removed) rank0.events().get(0)).blockHashes());
        // nothing learned for rank 1: rule 2 applies
        EventBatch rank1 =
                d.decode(3, Pack.batch(1, removed(list(1), "group_idx", 3), removed(list(2), "group_idx", 0)));
        assertEquals(1, rank1.filteredEvents());
        assertArrayEquals(new long[] {2}, ((KvEvent.Removed) rank1.events().get(0)).blockHashes());
        // a removal carrying its own kind uses rule 1
        EventBatch own = d.decode(4, Pack.batch(0, list("BlockRemoved", list(7), "GPU", 3, "mamba")));
        assertEquals(1, own.filteredEvents());
    }

    @Test
    void learnedKindAppliesLaterInSameMapBatchWithRankLast() throws Exception {
        Map<String, Object> batch = map(
                "ts",
                1.5,
                "events",
                list(
                        stored(list(1), "group_idx", 4, "kv_cache_spec_kind", "full_attention"),
                        removed(list(1), "group_idx", 4)),
                "data_parallel_rank",
                2);
        EventBatch b = new EngineBatchDecoder(4).decode(1, Pack.of(batch));
        assertEquals(2, b.dpRank());
        assertNoCounts(b);
        assertEquals(2, b.events().size());
    }

    @Test
    void mapBatchWithSglangRankKey() throws Exception {
        Map<String, Object> batch = map("attn_dp_rank", 3, "unknown", list(1, 2), "events", list(removed(list(5))));
        EventBatch b = new EngineBatchDecoder(4).decode(1, Pack.of(batch));
        assertEquals(3, b.dpRank());
        assertEquals(1, b.events().size());
        EventBatch noRank = new EngineBatchDecoder(4).decode(1, Pack.of(map("events", list(), "ts", 2.0)));
        assertEquals(EventBatch.NO_RANK, noRank.dpRank());
    }

    @Test
    void aRankOverTheBoundMakesTheBatchMalformedInsteadOfCreatingAPhantomOwner() {
        for (Object rank : new Object[] {EventBatch.MAX_RANK + 1, 1_000_000, 1L << 40}) {
            MalformedBatchException e = assertThrows(
                    MalformedBatchException.class,
                    () -> new EngineBatchDecoder(4).decode(1, Pack.batch(rank, removed(list(5)))));
            assertTrue(e.getMessage().contains("dp_rank"), e.getMessage());
            assertThrows(
                    MalformedBatchException.class,
                    () -> new EngineBatchDecoder(4)
                            .decode(1, Pack.of(map("events", list(removed(list(5))), "data_parallel_rank", rank))));
        }
    }

    @Test
    void rankElementRules() throws Exception {
        assertEquals(
                EventBatch.NO_RANK,
                new EngineBatchDecoder(4).decode(1, Pack.batch(null)).dpRank());
        assertEquals(
                EventBatch.NO_RANK,
                new EngineBatchDecoder(4).decode(1, Pack.batch(-1)).dpRank());
        assertEquals(
                EventBatch.NO_RANK,
                new EngineBatchDecoder(4).decode(1, Pack.batch("x")).dpRank());
        assertEquals(5, new EngineBatchDecoder(4).decode(1, Pack.batch(5)).dpRank());
        assertEquals(
                EventBatch.MAX_RANK,
                new EngineBatchDecoder(4)
                        .decode(1, Pack.batch(EventBatch.MAX_RANK))
                        .dpRank());
        // extra trailing batch elements (a proposed publisher id) are ignored
        byte[] extra = Pack.of(list(1.5, list(), 2, new byte[16], "more"));
        assertEquals(2, new EngineBatchDecoder(4).decode(1, extra).dpRank());
    }

    @Test
    void saltPrecedenceAndMultimodal() throws Exception {
        long salted = u("17009624042690211646"); // HV9: tokens 0..3, salt tenant-a
        // the tagged extra_keys salt applies when no top-level cache_salt is given
        Map<String, Object> tagged =
                stored(list(1), "extra_keys", list(list("dynamo-cache-salt:tenant-a")), "cache_salt", null);
        // a LoRA name equal to the first item is passed over, salt still found
        Map<String, Object> withLora =
                stored(list(2), "extra_keys", list(list("adapter-a", "dynamo-cache-salt:tenant-a")));
        withLora.put("lora_name", "adapter-a");
        // unprefixed strings are not salts
        Map<String, Object> plain = stored(list(3), "extra_keys", list(list("tenant-a")));
        String digest = "00000000000000ff" + "0".repeat(48);
        String digest2 = "0000000000000001" + "ab".repeat(24);
        Map<String, Object> mm = stored(list(4), "extra_keys", list(list(digest, list(digest2, 0), "short")));
        EventBatch b = new EngineBatchDecoder(4).decode(1, Pack.batch(0, tagged, withLora, plain, mm));
        assertNoCounts(b);
        assertArrayEquals(new long[] {salted}, ((KvEvent.Stored) b.events().get(0)).tokensHashes());
        long loraAndSalt = u("8269515957840517240"); // HV10
        assertArrayEquals(new long[] {loraAndSalt}, ((KvEvent.Stored) b.events().get(1)).tokensHashes());
        assertArrayEquals(new long[] {HV5[0]}, ((KvEvent.Stored) b.events().get(2)).tokensHashes());
        long expectedMm = BlockHasher.hashTokensWithMm(new int[] {0, 1, 2, 3}, 0, 4, new long[] {1, 255}, 1337);
        assertArrayEquals(new long[] {expectedMm}, ((KvEvent.Stored) b.events().get(3)).tokensHashes());

        // a top-level cache_salt that is not null wins over the tagged item, even an empty one (no salt at all)
        Map<String, Object> topLevel =
                stored(list(5), "extra_keys", list(list("dynamo-cache-salt:other")), "cache_salt", "tenant-a");
        Map<String, Object> empty =
                stored(list(6), "extra_keys", list(list("dynamo-cache-salt:other")), "cache_salt", "");
        EventBatch top = new EngineBatchDecoder(4).decode(2, Pack.batch(0, topLevel, empty));
        assertArrayEquals(new long[] {salted}, ((KvEvent.Stored) top.events().get(0)).tokensHashes());
        assertArrayEquals(new long[] {HV5[0]}, ((KvEvent.Stored) top.events().get(1)).tokensHashes());
    }

    /**
     * The multimodal vectors of docs/protocol/hashing.md#test-vectors: tokens [151655] x 4, block size 4, one
     * extra_keys item or pair per event.
     */
    @Test
    void multimodalIdentifiersAsDynamoHashesThem() throws Exception {
        assertEquals(
                u("14437604544409538977"),
                BlockHasher.hashBytes("opaque-renderer-image-0".getBytes(java.nio.charset.StandardCharsets.UTF_8), 0),
                "MM1");
        String d = "e1b13b308a3def0286abaa7bffae69be3fd9276f0d74a523364b3e7977922369";
        long mb0 = u("3745411083916171343");
        long mb1 = u("16259676455799718861");
        long mb2 = u("8746905179780434584");
        long mb3 = u("16508790456774063579");
        int[] tokens = {151655, 151655, 151655, 151655};
        long loraSeed = BlockHasher.seedFor(d, null);
        long saltSeed = BlockHasher.seedFor(null, "tenant-a");
        Object[][] cases = {
            {"MM1", list(list("opaque-renderer-image-0", -3)), null, mb1},
            {"MM2", list(list(d, 0)), null, mb2},
            {"MM3", list(d), null, mb2},
            {"MM4", list(d.toUpperCase(java.util.Locale.ROOT)), null, mb2},
            {"MM5", list("opaque-renderer-image-0"), null, mb0},
            {"MM6", list(list("", 0)), null, mb0},
            {"MM7", list(d), d, BlockHasher.hashTokens(tokens, 0, 4, loraSeed)},
            {"MM8", list("dynamo-cache-salt:tenant-a"), null, BlockHasher.hashTokens(tokens, 0, 4, saltSeed)},
            {"MB3", list(list(d, 0), list("opaque-renderer-image-0", -3)), null, mb3},
            {"an unsigned offset", list(list("opaque-renderer-image-0", new Pack.U64(-1L))), null, mb1},
            {
                "a pair of another shape is no identifier",
                list(
                        list("opaque-renderer-image-0", "x"),
                        list("opaque-renderer-image-0", -3, 1),
                        map("type", "MultiModalKey")),
                null,
                mb0
            },
        };
        for (Object[] c : cases) {
            Map<String, Object> event = map(
                    "type",
                    "BlockStored",
                    "block_hashes",
                    list(1),
                    "parent_block_hash",
                    null,
                    "token_ids",
                    list(151655, 151655, 151655, 151655),
                    "block_size",
                    4,
                    "lora_id",
                    null,
                    "medium",
                    "GPU",
                    "lora_name",
                    c[2],
                    "extra_keys",
                    list(c[1]));
            EventBatch b = new EngineBatchDecoder(4).decode(1, Pack.batch(0, event));
            assertNoCounts(b);
            assertEquals(
                    Long.toUnsignedString((Long) c[3]),
                    Long.toUnsignedString(((KvEvent.Stored) b.events().get(0)).tokensHashes()[0]),
                    (String) c[0]);
        }
    }

    @Test
    void hashEncodingsAndMediums() throws Exception {
        Object[] events = {
            list("BlockRemoved", list(new Pack.U64(5), new Pack.U64(-1L), -3, new byte[] {1, 2}, new byte[0]), "cpu"),
            list("BlockRemoved", list(1), "DISK"),
            list("BlockRemoved", list(1), "external"),
            list("BlockRemoved", list(1), "STORAGE"),
            list("BlockRemoved", list(1), "weird"),
            list("BlockRemoved", list(1)),
        };
        EventBatch b = new EngineBatchDecoder(4).decode(1, Pack.batch(0, events));
        assertNoCounts(b);
        KvEvent.Removed r = (KvEvent.Removed) b.events().get(0);
        assertArrayEquals(new long[] {5, -1L, -3L, 0x0102, 0}, r.blockHashes());
        assertEquals(StorageTier.HOST_PINNED, r.tier());
        assertEquals(StorageTier.DISK, ((KvEvent.Removed) b.events().get(1)).tier());
        assertEquals(StorageTier.EXTERNAL, ((KvEvent.Removed) b.events().get(2)).tier());
        assertEquals(StorageTier.DISK, ((KvEvent.Removed) b.events().get(3)).tier());
        assertEquals(StorageTier.DEVICE, ((KvEvent.Removed) b.events().get(4)).tier());
        assertEquals(StorageTier.DEVICE, ((KvEvent.Removed) b.events().get(5)).tier());
    }

    @Test
    void uint64TokenIdsWithinRangeAccepted() throws Exception {
        Map<String, Object> ev = stored(list(1));
        ev.put("token_ids", list(new Pack.U64(0), new Pack.U64(1), 2, new Pack.U64(3)));
        EventBatch b = new EngineBatchDecoder(4).decode(1, Pack.batch(0, ev));
        assertNoCounts(b);
        assertArrayEquals(new long[] {HV5[0]}, ((KvEvent.Stored) b.events().get(0)).tokensHashes());
        ev.put("token_ids", list(new Pack.U64(0), new Pack.U64(-1L), 2, 3));
        assertEquals(1, new EngineBatchDecoder(4).decode(1, Pack.batch(0, ev)).malformedEvents());
    }

    @Test
    void eventShapesToleratedInAnyOrderAndLength() throws Exception {
        Map<String, Object> reordered = new LinkedHashMap<>();
        reordered.put("medium", "GPU");
        reordered.put("token_ids", range(0, 3));
        reordered.put("locality", "LOCAL");
        reordered.put("block_size", 4);
        reordered.put("block_hashes", list(1));
        reordered.put("type", "BlockStored");
        // missing parent/lora keys = nil
        Object shortArray = list("BlockStored", list(2), null, range(0, 3), 4);
        Object longArray = list(
                "BlockStored",
                list(3),
                null,
                range(0, 3),
                4,
                null,
                "GPU",
                null,
                null,
                0,
                "full_attention",
                null,
                "future",
                list(1, 2));
        Object mixedCleared = map("type", "AllBlocksCleared", "x", 1);
        EventBatch b =
                new EngineBatchDecoder(4).decode(1, Pack.batch(0, reordered, shortArray, longArray, mixedCleared));
        assertNoCounts(b);
        assertEquals(4, b.events().size());
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(new long[] {HV5[0]}, ((KvEvent.Stored) b.events().get(i)).tokensHashes());
        }
    }

    @Test
    void batchLevelProblemsThrow() {
        EngineBatchDecoder d = new EngineBatchDecoder(16);
        List<byte[]> bad = List.of(
                new byte[0],
                Pack.of(42),
                Pack.of("x"),
                Pack.of(list(1.5)),
                Pack.of(list(1.5, 3, 0)),
                Pack.of(map("ts", 1.5)),
                Pack.of(map("events", 5)),
                new byte[] {(byte) 0xc1},
                new byte[] {(byte) 0x93, (byte) 0xcb, 0x3f},
                Arrays.copyOf(bytes(WireVectors.A), 120),
                new byte[] {(byte) 0x93, (byte) 0xc0, (byte) 0xdd, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff});
        for (byte[] payload : bad) {
            assertThrows(MalformedBatchException.class, () -> d.decode(1, payload));
        }
        assertThrows(MalformedBatchException.class, () -> d.decode(1, null));
        // the decoder is still usable afterwards
        assertDoesNotThrowDecode(d);
    }

    private static void assertDoesNotThrowDecode(EngineBatchDecoder d) {
        try {
            assertCommonBatch(d.decode(7, bytes(WireVectors.B)), 0);
        } catch (MalformedBatchException e) {
            throw new AssertionError(e);
        }
    }
}
