package dev.kvindexer.dump;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.PartitionIndex;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.Partition;
import dev.kvindexer.partition.Watermarks;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

class DumpParserTest {
    /** Collects what the parser emits and applies it to one index per partition. */
    private static final class Collector implements DumpHandler {
        final List<String> log = new ArrayList<>();
        PartitionIndex index;

        @Override
        public void partition(PartitionKey key, int blockSize) {
            log.add("partition " + key.modelName() + "|" + key.routingGroup() + " bs=" + blockSize);
            index = new PartitionIndex(blockSize == 0 ? 4 : blockSize);
        }

        @Override
        public void event(long workerId, int dpRank, KvEvent event) {
            log.add(Long.toUnsignedString(workerId) + "/" + dpRank + " "
                    + event.getClass().getSimpleName());
            if (event instanceof KvEvent.Stored s) {
                index.store(
                        workerId, dpRank, s.tier(), s.hasParent(), s.parentHash(), s.blockHashes(), s.tokensHashes());
            } else if (event instanceof KvEvent.StoredBySequence s) {
                index.storeBySequence(workerId, dpRank, s.tier(), s.hasParent(), s.parentHash(), s.sequenceHashes());
            }
        }

        @Override
        public void partitionFailed(PartitionKey key, String error) {
            log.add("failed " + key.dumpKey() + ": " + error);
        }

        @Override
        public void copies(int eventIndex, int copies) {
            log.add("event " + eventIndex + " x" + copies);
        }

        @Override
        public void exactSnapshot() {
            log.add("exact");
        }

        @Override
        public void watermark(long workerId, int dpRank, long seq) {
            log.add("watermark " + Long.toUnsignedString(workerId) + "/" + dpRank + " seq "
                    + Long.toUnsignedString(seq));
        }
    }

    private static Collector parse(String json) throws IOException {
        Collector c = new Collector();
        DumpParser.parse(new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)), c);
        return c;
    }

    private static List<OwnerMatch> sorted(List<OwnerMatch> m) {
        List<OwnerMatch> out = new ArrayList<>(m);
        out.sort(Comparator.comparingLong(OwnerMatch::workerId).thenComparingInt(OwnerMatch::dpRank));
        return out;
    }

    @Test
    void partitionsWhoseNamesHoldColonsAreReadBackApart() throws IOException {
        String json = new JsonObject()
                .put(new PartitionKey("x:y", "z").dumpKey(), JsonObject.of("block_size", 4, "events", List.of()))
                .put(new PartitionKey("x", "y:z").dumpKey(), JsonObject.of("block_size", 8, "events", List.of()))
                .encode();
        assertEquals(List.of("partition x:y|z bs=4", "partition x|y:z bs=8"), parse(json).log);
    }

    @Test
    void ourDumpRoundTripsThroughTheParserT5() throws IOException {
        // T5 of docs/protocol/index.md#test-vectors: device [11,12], host_pinned [13], disk [14], engine hashes chained
        // as HV12.
        long e11 = 11;
        long e12 = Long.parseUnsignedLong("10497221074644697006");
        long e13 = 8340346278797266542L;
        long e14 = 4128529435866013841L;
        Partition source = new Partition(
                new PartitionKey("test-model", "default"), 4, null, new EventCounters(), new Watermarks(), r -> {});
        PartitionIndex idx = source.index();
        idx.store(7, 0, StorageTier.DEVICE, false, 0, new long[] {e11, e12}, new long[] {11, 12});
        idx.store(7, 0, StorageTier.HOST_PINNED, true, e12, new long[] {e13}, new long[] {13});
        idx.store(7, 0, StorageTier.DISK, true, e13, new long[] {e14}, new long[] {14});
        idx.store(-1L, 3, StorageTier.DEVICE, false, 0, new long[] {-5L}, new long[] {11});

        Collector c = parse("{\"test-model:default\":" + source.dumpJson() + "}");
        assertEquals("partition test-model|default bs=4", c.log.get(0));
        long[] query = {11, 12, 13, 14};
        assertEquals(sorted(idx.match(query)), sorted(c.index.match(query)));
        assertTrue(c.log.contains("18446744073709551615/3 Stored"));
    }

    @Test
    void ourDumpCarriesReferenceCountsAndTheWatermarkOfEveryStream() throws IOException {
        Partition source =
                new Partition(new PartitionKey("m", "t"), 4, null, new EventCounters(), new Watermarks(), r -> {});
        source.openStream(new dev.kvindexer.partition.StreamSpec(7, 0, 1, null));
        source.onLive(
                7,
                0,
                1,
                new dev.kvindexer.event.EventBatch(
                        0,
                        dev.kvindexer.event.EventBatch.NO_RANK,
                        List.of(
                                new KvEvent.Stored(
                                        StorageTier.DEVICE, false, 0, new long[] {1, 2}, new long[] {11, 12}),
                                new KvEvent.Stored(StorageTier.DEVICE, true, 1, new long[] {2}, new long[] {12})),
                        0,
                        0,
                        0));
        String json = source.dumpJson();
        assertTrue(
                json.endsWith(",\"ref_counts\":[[1,2]],\"watermarks\":[{\"worker_id\":7,\"dp_rank\":0,\"seq\":0}]}"),
                json);
        Collector c = parse("{\"m:t\":" + json + "}");
        assertEquals(
                List.of("partition m|t bs=4", "7/0 Stored", "7/0 Stored", "event 1 x2", "exact", "watermark 7/0 seq 0"),
                c.log);
    }

    /**
     * Blocks stored without tokens (docs/protocol/events.md#standardized-events-into-index-operations) stay out of the
     * events Dynamo reads, in a member of their own.
     */
    @Test
    void blocksStoredWithoutTokensRoundTripInTheirOwnMember() throws IOException {
        long[] local = BlockHasher.localHashes(new int[] {1, 2, 3, 4, 5, 6}, 2, BlockHasher.BASE_SEED);
        long[] seq = BlockHasher.sequenceHashes(local);
        Partition source =
                new Partition(new PartitionKey("m", "t"), 2, null, new EventCounters(), new Watermarks(), r -> {});
        PartitionIndex idx = source.index();
        idx.store(7, 0, StorageTier.DEVICE, false, 0, new long[] {70}, new long[] {local[0]});
        idx.storeBySequence(8, 0, StorageTier.DEVICE, false, 0, new long[] {seq[0], seq[1]});
        idx.storeBySequence(8, 0, StorageTier.DEVICE, true, seq[0], new long[] {seq[1]});
        idx.storeBySequence(8, 0, StorageTier.HOST_PINNED, true, seq[1], new long[] {seq[2]});
        String json = source.dumpJson();
        assertTrue(json.contains("\"events\":[{\"worker_id\":7,"), json);
        assertTrue(json.contains("],\"sequence_events\":[{\"worker_id\":8,"), json);
        assertFalse(
                new JsonObject(json).getJsonArray("events").encode().contains("\"worker_id\":8"),
                "Dynamo's events hold no block without tokens");

        Collector c = parse("{\"m:t\":" + json + "}");
        assertEquals(
                List.of(
                        "partition m|t bs=2",
                        "7/0 Stored",
                        "8/0 StoredBySequence",
                        "8/0 StoredBySequence",
                        "8/0 StoredBySequence",
                        "event 2 x2",
                        "exact"),
                c.log,
                "the second block of worker 8 was stored twice");
        assertEquals(sorted(idx.match(local)), sorted(c.index.match(local)));
        assertEquals(
                List.of(new OwnerMatch(7, 0, 1, 1, 1), new OwnerMatch(8, 0, 2, 3, 3)), sorted(c.index.match(local)));
    }

    @Test
    void malformedExtensionsAreRejected() {
        String events = "{\"m:t\":{\"block_size\":4,\"events\":[],";
        assertThrows(IOException.class, () -> parse(events + "\"ref_counts\":[[0,1]]}}"));
        assertThrows(IOException.class, () -> parse(events + "\"ref_counts\":[[0]]}}"));
        assertThrows(IOException.class, () -> parse(events + "\"watermarks\":[{\"worker_id\":1}]}}"));
        assertThrows(IOException.class, () -> parse(events + "\"watermarks\":[{\"worker_id\":1,\"seq\":-2}]}}"));
    }

    @Test
    void readsTheReferenceRouterEventWithNewerMembersAndMultiBlockEvents() throws IOException {
        String dump =
                "{\"llama-3-8b:default\":{\"block_size\":16,\"events\":[{\"worker_id\":0,\"storage_tier\":\"device\","
                        + "\"residency_domain\":\"worker\",\"event\":{\"event_id\":22636961,\"data\":{\"stored\":{"
                        + "\"parent_hash\":null,\"start_position\":null,\"blocks\":[{\"block_hash\":2733357436102908004,"
                        + "\"tokens_hash\":2825904518766229643,\"mm_extra_info\":null},{\"block_hash\":18446744073709551615,"
                        + "\"tokens_hash\":10358785732907640880,\"mm_extra_info\":null}]}},\"dp_rank\":2}}]},"
                        + "\"broken:t\":{\"error\":\"partition dump failed\"}}";
        Collector c = parse(dump);
        assertEquals(
                List.of("partition llama-3-8b|default bs=16", "0/2 Stored", "failed broken:t: partition dump failed"),
                c.log);
        List<OwnerMatch> m =
                c.index.match(new long[] {2825904518766229643L, Long.parseUnsignedLong("10358785732907640880")});
        assertEquals(List.of(new OwnerMatch(0, 2, 2, 2, 2)), m);
    }

    @Test
    void oldestShapeIsABareEventsArrayAndKeysSplitAtTheFirstColon() throws IOException {
        Collector c = parse("{\"m:a:b\":[{\"worker_id\":1,\"event\":{\"event_id\":1,\"data\":{\"stored\":"
                + "{\"parent_hash\":null,\"blocks\":[{\"block_hash\":42,\"tokens_hash\":42}]}}}}]}");
        assertEquals(List.of("partition m|a:b bs=0", "1/0 Stored"), c.log);
    }

    @Test
    void removedAndClearedVariantsParse() throws IOException {
        Collector c = parse(
                "{\"m:t\":{\"block_size\":4,\"events\":[{\"worker_id\":1,\"storage_tier\":\"disk\",\"event\":{\"event_id\":0,"
                        + "\"data\":{\"removed\":{\"block_hashes\":[18405780835976372970]}},\"dp_rank\":0}},"
                        + "{\"worker_id\":1,\"event\":{\"event_id\":1,\"data\":\"cleared\",\"dp_rank\":0}}]}}");
        assertEquals(List.of("partition m|t bs=4", "1/0 Removed", "1/0 Cleared"), c.log);
    }

    @Test
    void malformedDumpsAreRejectedWithALocation() {
        assertThrows(IOException.class, () -> parse("[1,2]"));
        assertThrows(IOException.class, () -> parse("{\"nocolon\":[]}"));
        assertThrows(
                IOException.class,
                () -> parse("{\"m:t\":{\"events\":[{\"worker_id\":-1,\"event\":{\"data\":\"cleared\"}}]}}"));
        assertThrows(
                IOException.class,
                () -> parse("{\"m:t\":{\"events\":[{\"worker_id\":1,\"event\":{\"data\":{\"stored\":"
                        + "{\"parent_hash\":null,\"blocks\":[{\"block_hash\":1}]}}}}]}}"));
        assertThrows(
                IOException.class,
                () -> parse(
                        "{\"m:t\":{\"events\":[{\"worker_id\":1,\"storage_tier\":\"gpu\",\"event\":{\"data\":\"cleared\"}}]}}"));
        assertThrows(IOException.class, () -> parse("{\"m:t\":{\"events\":[{\"worker_id\":1"));
    }

    @Test
    void hashesAboveTwoToThe63KeepTheirBits() throws IOException {
        Collector c = parse(
                "{\"m:t\":{\"block_size\":4,\"events\":[{\"worker_id\":18446744073709551615,\"event\":{\"data\":{\"stored\":"
                        + "{\"parent_hash\":9223372036854775808,\"blocks\":[{\"block_hash\":18446744073709551614,\"tokens_hash\":1}]}}}}]}}");
        assertEquals("18446744073709551615/0 Stored", c.log.get(1));
    }
}
