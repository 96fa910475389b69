package dev.kvindexer.dump;

import dev.kvindexer.event.StorageTier;
import java.io.IOException;

/**
 * One partition's {@code /dump} value rendered from its binary snapshot a piece at a time, so neither the index nor
 * the text has to be held while a client reads it: the snapshot is the atomic step, the text follows it. Each member
 * of the value (events, sequence events, ref counts, watermarks) is a pass of its own over the snapshot, so what is
 * held beside the snapshot is one piece, however many blocks the partition has. The pieces together are exactly what
 * {@link DumpWriter} writes for the same blocks in the same order.
 */
public final class PartitionDumpJson implements SnapshotRecords.Sink {
    /** The passes, in the order of the value's members. */
    private enum Pass {
        EVENTS,
        SEQUENCE_EVENTS,
        REF_COUNTS,
        WATERMARKS,
        DONE
    }

    private final byte[] payload;
    private final long[] missingInstances;
    private StringBuilder out;
    private SnapshotRecords records;
    private Pass pass = Pass.EVENTS;
    /** Event ids count every block of the snapshot in order, in every pass, so each pass names the same ids. */
    private long eventId;

    private boolean first = true;
    private boolean anyBySequence;

    public PartitionDumpJson(int blockSize, byte[] payload, long[] missingInstances) {
        this.payload = payload;
        this.missingInstances = missingInstances;
        this.records = new SnapshotRecords(payload);
        this.out = new StringBuilder(256).append(DumpWriter.head(blockSize));
    }

    /** The next piece, about {@code maxChars} long or the last one shorter; null once the value is complete. */
    public String next(int maxChars) throws IOException {
        if (pass == Pass.DONE) {
            return null;
        }
        while (out.length() < maxChars && pass != Pass.DONE) {
            if (records.hasNext()) {
                records.next(this);
            } else {
                nextPass();
            }
        }
        String piece = out.toString();
        out = new StringBuilder(Math.max(256, Math.min(piece.length(), maxChars + 512)));
        return piece;
    }

    private void nextPass() {
        out.append(']');
        pass = switch (pass) {
            case EVENTS -> anyBySequence ? Pass.SEQUENCE_EVENTS : Pass.REF_COUNTS;
            case SEQUENCE_EVENTS -> Pass.REF_COUNTS;
            case REF_COUNTS -> Pass.WATERMARKS;
            case WATERMARKS, DONE -> Pass.DONE;
        };
        switch (pass) {
            case SEQUENCE_EVENTS -> out.append(",\"sequence_events\":[");
            case REF_COUNTS -> out.append(",\"ref_counts\":[");
            case WATERMARKS -> out.append(",\"watermarks\":[");
            case DONE -> DumpWriter.end(out, missingInstances);
            default -> throw new IllegalStateException(pass.name());
        }
        records = new SnapshotRecords(payload);
        eventId = 0;
        first = true;
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
        long id = eventId++;
        anyBySequence |= bySequence;
        if (pass == (bySequence ? Pass.SEQUENCE_EVENTS : Pass.EVENTS)) {
            long second = bySequence ? blockHash : tokensHash;
            DumpWriter.routerEvent(element(), id, workerId, dpRank, tier, hasParent, parentHash, blockHash, second);
        }
    }

    @Override
    public void copies(int copies) {
        if (pass == Pass.REF_COUNTS) {
            DumpWriter.refCount(element(), eventId - 1, copies);
        }
    }

    @Override
    public void watermark(long workerId, int dpRank, long seq) {
        if (pass == Pass.WATERMARKS) {
            DumpWriter.watermark(element(), workerId, dpRank, seq);
        }
    }

    /** {@link #out}, with a comma before every element of a member but its first. */
    private StringBuilder element() {
        DumpWriter.separate(out, !first);
        first = false;
        return out;
    }
}
