package dev.kvindexer.dump;

import dev.kvindexer.event.StorageTier;
import java.io.IOException;
import java.util.Arrays;

/**
 * Decodes one partition's snapshot payload ({@link SnapshotFormat}) a record at a time, so a reader can stop between
 * records (a dump streamed to a slow client) or gather them into chains ({@link SnapshotReader}). Untrusted input:
 * every record is checked against the bytes left, and a record that refers to one before it that is not there is
 * malformed.
 */
public final class SnapshotRecords {
    private static final StorageTier[] TIERS = StorageTier.values();

    /** Receives the records in payload order. */
    public interface Sink {
        /**
         * One holder of a block; {@code owner} is the dense index of (worker, dp_rank) in this payload, 0 for the
         * first owner named, and {@code tokensHash} is 0 for a block stored by sequence hash.
         */
        void block(
                int owner,
                long workerId,
                int dpRank,
                StorageTier tier,
                boolean bySequence,
                boolean hasParent,
                long parentHash,
                long blockHash,
                long tokensHash)
                throws IOException;

        /** The block of the record before is held {@code copies} (at least 2) times by its owner. */
        void copies(int copies) throws IOException;

        /** The last applied seq of stream (worker, registered dp_rank) when the snapshot was taken. */
        void watermark(long workerId, int dpRank, long seq) throws IOException;

        /** Stream (worker, registered dp_rank) lost {@code batches} batches for good (SnapshotFormat LOSS). */
        default void loss(long workerId, int dpRank, long batches) throws IOException {}
    }

    private final byte[] b;
    private int pos;
    private long[] ownerWorkers = new long[8];
    private int[] ownerRanks = new int[8];
    private int owners;
    private int owner = -1;
    private long tokens;
    private long block;
    private boolean previousHasParent;
    private long previousParent;
    private boolean previousIsBlock;

    public SnapshotRecords(byte[] payload) {
        this.b = payload;
    }

    public boolean hasNext() {
        return pos < b.length;
    }

    /** Decodes the next record into {@code sink}. */
    public void next(Sink sink) throws IOException {
        int flags = u8();
        if ((flags & (SnapshotFormat.HAS_PARENT | SnapshotFormat.PARENT_IS_PREVIOUS)) == SnapshotFormat.CONTROL) {
            if (flags != SnapshotFormat.CONTROL) {
                throw malformed("control record with flags " + flags);
            }
            control(sink);
        } else {
            block(flags, sink);
        }
    }

    private void block(int flags, Sink sink) throws IOException {
        if ((flags & SnapshotFormat.SAME_OWNER) == 0) {
            owner = ownerRef();
        } else if (owner < 0) {
            throw malformed("a first record names no owner");
        }
        boolean hasParent = (flags & SnapshotFormat.HAS_PARENT) != 0;
        boolean sameBlock = (flags & SnapshotFormat.SAME_BLOCK) != 0;
        long parent = 0;
        if (hasParent) {
            if ((flags & SnapshotFormat.PARENT_IS_PREVIOUS) == 0) {
                parent = u64();
            } else if (!previousIsBlock) {
                throw malformed("parent is the previous record's, but there is none");
            } else if (!sameBlock) {
                parent = block;
            } else if (previousHasParent) {
                parent = previousParent;
            } else {
                throw malformed("parent is the previous record's parent, which it has not");
            }
        }
        boolean bySequence = (flags & SnapshotFormat.BY_SEQUENCE) != 0;
        if (bySequence) {
            tokens = 0;
        } else if ((flags & SnapshotFormat.SAME_TOKENS) == 0) {
            tokens = u64();
        } else if (!previousIsBlock) {
            throw malformed("tokens hash of the previous block, but there is none");
        }
        if (!sameBlock) {
            block = u64();
        } else if (!previousIsBlock) {
            throw malformed("block hash of the previous block, but there is none");
        }
        previousIsBlock = true;
        previousHasParent = hasParent;
        previousParent = parent;
        sink.block(
                owner,
                ownerWorkers[owner],
                ownerRanks[owner],
                TIERS[flags & SnapshotFormat.TIER_MASK],
                bySequence,
                hasParent,
                parent,
                block,
                tokens);
    }

    private void control(Sink sink) throws IOException {
        int type = u8();
        if (type == SnapshotFormat.COPIES) {
            long copies = varint();
            if (!previousIsBlock || copies < 2 || copies > Integer.MAX_VALUE) {
                throw malformed("copies " + copies + " with no block before it");
            }
            sink.copies((int) copies);
        } else if (type == SnapshotFormat.WATERMARK) {
            previousIsBlock = false;
            long worker = u64();
            long rank = varint();
            long seq = u64();
            if (rank > Integer.MAX_VALUE) {
                throw malformed("dp_rank " + rank + " out of range");
            }
            sink.watermark(worker, (int) rank, seq);
        } else if (type == SnapshotFormat.LOSS) {
            previousIsBlock = false;
            long worker = u64();
            long rank = varint();
            long batches = varint();
            if (rank > Integer.MAX_VALUE || batches <= 0) {
                throw malformed("loss of " + Long.toUnsignedString(batches) + " batches on dp_rank " + rank);
            }
            sink.loss(worker, (int) rank, batches);
        } else {
            throw malformed("unknown control record " + type);
        }
    }

    private int ownerRef() throws IOException {
        long index = varint();
        if (Long.compareUnsigned(index, owners) < 0) {
            return (int) index;
        }
        if (index != owners) {
            throw malformed("owner " + index + " before owner " + owners + " was defined");
        }
        long worker = u64();
        long rank = varint();
        if (rank > Integer.MAX_VALUE) {
            throw malformed("dp_rank " + rank + " out of range");
        }
        if (owners == ownerWorkers.length) {
            ownerWorkers = Arrays.copyOf(ownerWorkers, owners * 2);
            ownerRanks = Arrays.copyOf(ownerRanks, owners * 2);
        }
        ownerWorkers[owners] = worker;
        ownerRanks[owners] = (int) rank;
        return owners++;
    }

    private int u8() throws IOException {
        if (pos >= b.length) {
            throw malformed("record cut short");
        }
        return b[pos++] & 0xFF;
    }

    private long u64() throws IOException {
        if (b.length - pos < 8) {
            throw malformed("record cut short");
        }
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v |= (long) (b[pos++] & 0xFF) << (8 * i);
        }
        return v;
    }

    private long varint() throws IOException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            int x = u8();
            v |= (long) (x & 0x7F) << shift;
            if ((x & 0x80) == 0) {
                return v;
            }
        }
        throw malformed("varint too long");
    }

    /** An error that says where in the payload it was found. */
    IOException malformed(String what) {
        return new IOException("malformed snapshot payload at byte " + pos + ": " + what);
    }
}
