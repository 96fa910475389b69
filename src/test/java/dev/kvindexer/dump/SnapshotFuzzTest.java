package dev.kvindexer.dump;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.Partition;
import dev.kvindexer.partition.PartitionSnapshot;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.support.Mutations;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * What another member sends of a partition (a shard's snapshot for a hand-over or a sharded /dump) is untrusted: a
 * damaged document or payload is refused with an IOException, read within its byte limit, and never anything else.
 */
class SnapshotFuzzTest {
    private static final int ROUNDS = 20_000;
    private static final PartitionKey KEY = new PartitionKey("m", "g");

    private static Partition source() {
        Partition p = new Partition(KEY, 4, null, new EventCounters(), new Watermarks(), r -> {});
        long[] tokens = LongStream.range(1000, 1040).toArray();
        long[] engine = LongStream.range(1, 41).toArray();
        p.index().store(7, 0, StorageTier.DEVICE, false, 0, engine, tokens);
        p.index()
                .store(
                        8,
                        1,
                        StorageTier.DEVICE,
                        false,
                        0,
                        java.util.Arrays.copyOf(engine, 12),
                        java.util.Arrays.copyOf(tokens, 12));
        p.index()
                .store(
                        7,
                        0,
                        StorageTier.DEVICE,
                        false,
                        0,
                        java.util.Arrays.copyOf(engine, 3),
                        java.util.Arrays.copyOf(tokens, 3));
        p.index().store(7, 0, StorageTier.HOST_PINNED, true, engine[2], new long[] {901, 902}, new long[] {3001, 3002});
        p.index().storeBySequence(10, 0, StorageTier.DEVICE, false, 0, new long[] {41, 42, 43});
        return p;
    }

    private static byte[] document(byte[] payload) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(SnapshotWriter.header());
        out.writeBytes(SnapshotWriter.sectionHead(KEY, 4, payload.length));
        out.writeBytes(payload);
        out.writeBytes(SnapshotWriter.end());
        return out.toByteArray();
    }

    /** Counts what a reader was handed, so a run that reads nothing says so. */
    private static final class Counting implements DumpHandler {
        int events;

        @Override
        public void partition(PartitionKey key, int blockSize) {}

        @Override
        public void event(long workerId, int dpRank, KvEvent event) {
            events++;
        }

        @Override
        public void partitionFailed(PartitionKey key, String error) {}

        @Override
        public void copies(int eventIndex, int copies) {}

        @Override
        public void exactSnapshot() {}

        @Override
        public void watermark(long workerId, int dpRank, long seq) {}
    }

    @Test
    void damagedDocumentsAndPayloadsOnlyEverFailWithIOException() {
        Partition p = source();
        List<byte[]> payloads = new ArrayList<>();
        for (PartitionSnapshot.Order order : PartitionSnapshot.Order.values()) {
            payloads.add(p.snapshot(order));
        }
        SplittableRandom rnd = new SplittableRandom(0x736e6170L);
        int refused = 0;
        int read = 0;
        for (int i = 0; i < ROUNDS; i++) {
            byte[] payload = payloads.get(rnd.nextInt(payloads.size()));
            boolean whole = rnd.nextBoolean();
            byte[] input = Mutations.mutate(whole ? document(payload) : payload, rnd);
            try {
                if (whole) {
                    Counting c = new Counting();
                    SnapshotReader.read(new ByteArrayInputStream(input), input.length + 64L, c);
                    read += c.events > 0 ? 1 : 0;
                } else {
                    PartitionDumpJson json = new PartitionDumpJson(4, input, new long[0]);
                    while (json.next(256) != null) {
                        // every piece of the value
                    }
                    read++;
                }
            } catch (IOException expected) {
                refused++;
            } catch (RuntimeException | Error e) {
                throw new AssertionError("input " + i + " threw " + e, e);
            }
        }
        assertTrue(refused > ROUNDS / 10 && read > ROUNDS / 10, refused + " refused, " + read + " read");
    }
}
