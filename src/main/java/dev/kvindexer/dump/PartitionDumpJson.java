package dev.kvindexer.dump;

import dev.kvindexer.event.StorageTier;
import java.io.IOException;

/**
 * One partition's {@code /dump} value rendered from its binary snapshot a piece at a time, so neither the index nor
 * the whole text has to be held while a client reads it: the snapshot is the atomic step, the text follows it.
 * The pieces together are exactly what {@link DumpWriter} writes for the same blocks in the same order.
 */
public final class PartitionDumpJson implements SnapshotRecords.Sink {
    private final SnapshotRecords records;
    private final DumpWriter writer;
    private final long[] missingInstances;
    private boolean done;

    public PartitionDumpJson(int blockSize, byte[] payload, long[] missingInstances) {
        this.records = new SnapshotRecords(payload);
        this.writer = new DumpWriter(blockSize);
        this.missingInstances = missingInstances;
    }

    /** The next piece, about {@code maxChars} long or the last one shorter; null once the value is complete. */
    public String next(int maxChars) throws IOException {
        if (done) {
            return null;
        }
        while (records.hasNext() && writer.pendingChars() < maxChars) {
            records.next(this);
        }
        if (records.hasNext()) {
            return writer.takeEvents();
        }
        done = true;
        return writer.finish(missingInstances);
    }

    @Override
    public void block(
            int owner,
            long workerId,
            int dpRank,
            StorageTier tier,
            boolean bySequence,
            boolean hasParent,
            long parentHash,
            long blockHash,
            long tokensHash) {
        if (bySequence) {
            writer.storedBySequence(workerId, dpRank, tier, hasParent, parentHash, blockHash);
        } else {
            writer.stored(workerId, dpRank, tier, hasParent, parentHash, blockHash, tokensHash);
        }
    }

    @Override
    public void copies(int copies) {
        writer.copies(copies);
    }

    @Override
    public void watermark(long workerId, int dpRank, long seq) {
        writer.watermark(workerId, dpRank, seq);
    }
}
