package dev.kvindexer.dump;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.PartitionIndex;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.Partition;
import dev.kvindexer.partition.PartitionSnapshot;
import dev.kvindexer.partition.PeerSnapshot;
import dev.kvindexer.partition.StreamSpec;
import dev.kvindexer.partition.Watermarks;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * The binary snapshot says what the JSON dump says, block for block, and a partition recovered from it is the
 * partition it was taken from; a hostile or broken document fails with an IOException and allocates no more than
 * the limit lets it.
 */
class SnapshotTest {
    private static final PartitionKey KEY = new PartitionKey("m:odd%", "g");

    /** Chains, shared and diverging holders, engine hashes that differ, copies, lower tiers, blocks by sequence. */
    private static Partition source() {
        Partition p = new Partition(KEY, 4, null, new EventCounters(), new Watermarks(), r -> {});
        PartitionIndex idx = p.index();
        long[] tokens = LongStream.range(1000, 1050).toArray();
        long[] engine = LongStream.range(1, 51).toArray();
        idx.store(7, 0, StorageTier.DEVICE, false, 0, engine, tokens);
        idx.store(8, 1, StorageTier.DEVICE, false, 0, slice(engine, 0, 20), slice(tokens, 0, 20));
        idx.store(
                8,
                1,
                StorageTier.DEVICE,
                true,
                engine[19],
                LongStream.range(500, 510).toArray(),
                LongStream.range(2000, 2010).toArray());
        idx.store(9, 0, StorageTier.DEVICE, false, 0, LongStream.range(-5, 0).toArray(), slice(tokens, 0, 5));
        idx.store(7, 0, StorageTier.DEVICE, false, 0, slice(engine, 0, 3), slice(tokens, 0, 3));
        idx.store(7, 0, StorageTier.HOST_PINNED, true, engine[2], new long[] {901, 902}, new long[] {3001, 3002});
        idx.store(-1L, 3, StorageTier.DISK, false, 0, new long[] {-77L}, new long[] {1000});
        idx.storeBySequence(10, 0, StorageTier.DEVICE, false, 0, new long[] {41, 42, 43});
        p.openStream(new StreamSpec(11, 0, 1, null));
        p.onLive(
                11,
                0,
                1,
                new EventBatch(
                        5,
                        EventBatch.NO_RANK,
                        List.of(new KvEvent.Stored(StorageTier.DEVICE, false, 0, new long[] {61}, new long[] {1000})),
                        0,
                        0,
                        0));
        return p;
    }

    private static long[] slice(long[] a, int from, int to) {
        return java.util.Arrays.copyOfRange(a, from, to);
    }

    private static byte[] document(Partition p) {
        byte[] payload = p.snapshot();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(SnapshotWriter.header());
        out.writeBytes(SnapshotWriter.sectionHead(p.key(), 4, payload.length));
        out.writeBytes(payload);
        out.writeBytes(SnapshotWriter.failedSection(new PartitionKey("x", "y"), "busy"));
        out.writeBytes(SnapshotWriter.end());
        return out.toByteArray();
    }

    /** Every block a document places, one line each, with its copies and the watermarks, sorted. */
    private static final class Blocks implements DumpHandler {
        final List<String> lines = new ArrayList<>();
        final List<int[]> eventLines = new ArrayList<>();
        final List<PeerSnapshot.Event> events = new ArrayList<>();
        /** Extra copies go after every event of the document: copies name events by their place in it. */
        final List<PeerSnapshot.Event> extraCopies = new ArrayList<>();

        final List<PeerSnapshot.StreamWatermark> watermarks = new ArrayList<>();
        final List<PeerSnapshot.StreamLoss> losses = new ArrayList<>();
        final List<String> sections = new ArrayList<>();
        boolean exact;

        @Override
        public void partition(PartitionKey key, int blockSize) {
            sections.add(key.dumpKey() + " bs=" + blockSize);
        }

        @Override
        public void event(long workerId, int dpRank, KvEvent event) {
            events.add(new PeerSnapshot.Event(workerId, dpRank, event));
            int first = lines.size();
            String who = Long.toUnsignedString(workerId) + "/" + dpRank + " ";
            if (event instanceof KvEvent.Stored s) {
                long parent = s.hasParent() ? s.parentHash() : 0;
                for (int i = 0; i < s.blockHashes().length; i++) {
                    lines.add(who + s.tier() + " " + (i > 0 || s.hasParent() ? parent : "root") + " -> "
                            + s.blockHashes()[i] + " tokens " + s.tokensHashes()[i]);
                    parent = s.blockHashes()[i];
                }
            } else if (event instanceof KvEvent.StoredBySequence s) {
                long parent = s.hasParent() ? s.parentHash() : 0;
                for (int i = 0; i < s.sequenceHashes().length; i++) {
                    lines.add(who + s.tier() + " seq " + (i > 0 || s.hasParent() ? parent : "root") + " -> "
                            + s.sequenceHashes()[i]);
                    parent = s.sequenceHashes()[i];
                }
            }
            eventLines.add(new int[] {first, lines.size()});
        }

        @Override
        public void loss(long workerId, int dpRank, long batches) {
            losses.add(new PeerSnapshot.StreamLoss(workerId, dpRank, batches));
        }

        @Override
        public void partitionFailed(PartitionKey key, String error) {
            sections.add("failed " + key.dumpKey() + ": " + error);
        }

        @Override
        public void copies(int eventIndex, int copies) {
            int[] range = eventLines.get(eventIndex);
            assertEquals(1, range[1] - range[0], "copies name a single block");
            lines.set(range[0], lines.get(range[0]) + " x" + copies);
            for (int i = 1; i < copies; i++) {
                extraCopies.add(events.get(eventIndex));
            }
        }

        @Override
        public void exactSnapshot() {
            exact = true;
        }

        @Override
        public void watermark(long workerId, int dpRank, long seq) {
            watermarks.add(new PeerSnapshot.StreamWatermark(workerId, dpRank, seq));
            lines.add("watermark " + workerId + "/" + dpRank + " " + seq);
        }

        List<String> sorted() {
            List<String> out = new ArrayList<>(lines);
            Collections.sort(out);
            return out;
        }
    }

    private static Blocks fromJson(Partition p) throws IOException {
        Blocks b = new Blocks();
        String doc = "{" + "\"" + KEY.dumpKey().replace("\"", "\\\"") + "\":" + p.dumpJson() + "}";
        DumpParser.parse(new ByteArrayInputStream(doc.getBytes(StandardCharsets.UTF_8)), b);
        return b;
    }

    private static Blocks fromSnapshot(byte[] document) throws IOException {
        Blocks b = new Blocks();
        SnapshotReader.read(new ByteArrayInputStream(document), document.length, b);
        return b;
    }

    @Test
    void theSnapshotPlacesTheBlocksTheJsonDumpPlacesInFewerEvents() throws IOException {
        Partition p = source();
        Blocks json = fromJson(p);
        Blocks binary = fromSnapshot(document(p));
        assertEquals(json.sorted(), binary.sorted());
        assertTrue(binary.exact);
        assertEquals(List.of(KEY.dumpKey() + " bs=4", "failed x:y: busy"), binary.sections);
        assertTrue(
                binary.eventLines.size() < json.eventLines.size() / 4,
                binary.eventLines.size() + " chains for " + json.eventLines.size() + " blocks");
    }

    /** The streamed /dump renders the breadth-first snapshot into exactly the text the index writes directly. */
    @Test
    void theJsonRenderedFromASnapshotIsTheDumpCharacterForCharacter() throws IOException {
        Partition p = source();
        byte[] breadthFirst = p.snapshot(PartitionSnapshot.Order.BREADTH_FIRST);
        for (int piece : new int[] {1, 100, 1 << 16}) {
            PartitionDumpJson renderer = new PartitionDumpJson(4, breadthFirst, new long[0]);
            StringBuilder text = new StringBuilder();
            int pieces = 0;
            for (String s; (s = renderer.next(piece)) != null; pieces++) {
                text.append(s);
            }
            assertEquals(p.dumpJson(), text.toString(), "pieces of " + piece + " characters");
            assertTrue(piece > 100 || pieces > 10, pieces + " pieces of " + piece);
        }
        String lacking = new PartitionDumpJson(4, breadthFirst, new long[] {3, -1L}).next(1 << 30);
        assertTrue(lacking.endsWith(",\"missing_instances\":[3,18446744073709551615]}"), lacking);
    }

    @Test
    void aPartitionRecoveredFromItsSnapshotIsThePartitionItWasTakenFrom() throws IOException {
        Partition p = source();
        Blocks binary = fromSnapshot(document(p));
        Partition copy = new Partition(KEY, 4, null, new EventCounters(), new Watermarks(), r -> {});
        List<PeerSnapshot.Event> all = new ArrayList<>(binary.events);
        all.addAll(binary.extraCopies);
        copy.recover(new PeerSnapshot(all, binary.watermarks, binary.exact, binary.losses, false));
        assertEquals(fromJson(p).sorted(), fromJson(copy).sorted());
        assertEquals(p.index().copies(7, 0, StorageTier.DEVICE, 2), copy.index().copies(7, 0, StorageTier.DEVICE, 2));
        assertArrayEquals(p.snapshot(), copy.snapshot(), "and it snapshots to the same bytes");
    }

    @Test
    void aChainCostsSeventeenBytesABlockAndAboutTwoMoreForEachFurtherHolder() throws IOException {
        int n = 10_000;
        Random random = new Random(7);
        long[] engine = random.longs(n).toArray();
        long[] tokens = random.longs(n).toArray();
        for (int holders = 1; holders <= 4; holders++) {
            Partition p = new Partition(KEY, 4, null, new EventCounters(), new Watermarks(), r -> {});
            for (int h = 0; h < holders; h++) {
                p.index().store(h + 1, 0, StorageTier.DEVICE, false, 0, engine, tokens);
            }
            byte[] snapshot = p.snapshot();
            // The first holder of each block then names its owner too: one byte more than alone.
            int perBlock = holders == 1 ? 17 : 16 + 2 * holders;
            assertTrue(
                    snapshot.length <= perBlock * n + 64,
                    snapshot.length + " bytes for " + n + " blocks of " + holders + " holders");
            Blocks read = fromSnapshot(document(p));
            assertEquals(fromJson(p).sorted(), read.sorted());
            assertEquals(holders, read.events.size(), "one chain per holder");
        }
    }

    @Test
    void everyCutShortDocumentFailsAsSuch() throws IOException {
        byte[] doc = document(source());
        for (int cut = 0; cut < doc.length; cut++) {
            byte[] prefix = slice(doc, cut);
            assertThrows(IOException.class, () -> fromSnapshot(prefix), "cut at " + cut);
        }
    }

    @Test
    void flippedBytesFailAsIoExceptionsOrReadAsSomethingNeverAsACrash() throws IOException {
        byte[] doc = document(source());
        Random random = new Random(42);
        for (int i = 0; i < 2000; i++) {
            byte[] broken = doc.clone();
            int flips = 1 + random.nextInt(4);
            for (int f = 0; f < flips; f++) {
                broken[random.nextInt(broken.length)] ^= (byte) (1 + random.nextInt(255));
            }
            try {
                fromSnapshot(broken);
            } catch (IOException expected) {
                // refused: what a broken document should get
            }
        }
    }

    @Test
    void declaredLengthsAreCheckedAgainstTheLimitBeforeAnythingIsAllocated() {
        ByteArrayOutputStream doc = new ByteArrayOutputStream();
        doc.writeBytes(SnapshotWriter.header());
        doc.writeBytes(SnapshotWriter.sectionHead(KEY, 4, Integer.MAX_VALUE));
        IOException tooLarge = assertThrows(
                IOException.class,
                () -> SnapshotReader.read(new ByteArrayInputStream(doc.toByteArray()), 1 << 20, new Blocks()));
        assertTrue(tooLarge.getMessage().contains("larger than the limit of 1048576 bytes"), tooLarge.getMessage());

        byte[] longString = {'K', 'V', 'S', 'N', 'A', 'P', 1, 'P', (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x7F};
        IOException string = assertThrows(
                IOException.class,
                () -> SnapshotReader.read(new ByteArrayInputStream(longString), Long.MAX_VALUE, new Blocks()));
        assertTrue(string.getMessage().contains("longer than"), string.getMessage());

        IOException magic = assertThrows(
                IOException.class,
                () -> SnapshotReader.read(
                        new ByteArrayInputStream("{\"m:g\":{}}".getBytes(StandardCharsets.UTF_8)),
                        1 << 20,
                        new Blocks()));
        assertEquals("not a kvindexer snapshot", magic.getMessage());
    }

    private static byte[] slice(byte[] a, int length) {
        return java.util.Arrays.copyOf(a, length);
    }
}
