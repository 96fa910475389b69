package dev.kvindexer.dump;

import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads a binary snapshot document ({@link SnapshotFormat}) into a {@link DumpHandler}, as {@link DumpParser} reads
 * a JSON dump: each owner's chain of blocks becomes one stored event. Untrusted input: every declared length is
 * checked against what the document may still take before anything is allocated, and a document cut short or
 * malformed fails with an IOException that says where.
 */
public final class SnapshotReader {
    private static final int MAX_STRING_BYTES = 64 * 1024;
    private static final StorageTier[] TIERS = StorageTier.values();

    private final InputStream in;
    private final long maxBytes;
    private long consumed;

    private SnapshotReader(InputStream in, long maxBytes) {
        this.in = in;
        this.maxBytes = maxBytes;
    }

    /** Reads the whole document; fails once it would take more than {@code maxBytes}. */
    public static void read(InputStream in, long maxBytes, DumpHandler sink) throws IOException {
        new SnapshotReader(in, maxBytes).document(sink);
    }

    private void document(DumpHandler sink) throws IOException {
        byte[] magic = bytes(SnapshotFormat.MAGIC.length, "magic");
        if (!Arrays.equals(magic, SnapshotFormat.MAGIC)) {
            throw new IOException("not a kvindexer snapshot");
        }
        int version = u8("version");
        if (version != SnapshotFormat.VERSION) {
            throw new IOException("snapshot version " + version + " is not " + SnapshotFormat.VERSION);
        }
        while (true) {
            int kind = u8("section");
            if (kind == SnapshotFormat.END) {
                return;
            }
            if (kind == SnapshotFormat.FAILED) {
                sink.partitionFailed(new PartitionKey(string(), string()), string());
            } else if (kind == SnapshotFormat.PARTITION) {
                PartitionKey key = new PartitionKey(string(), string());
                int blockSize = intVarint("block_size");
                int length = intVarint("payload length");
                byte[] payload = bytes(length, "payload of " + key.dumpKey());
                sink.partition(key, blockSize);
                new Payload(payload, sink).read();
            } else {
                throw new IOException("unknown section " + kind + " at byte " + (consumed - 1));
            }
        }
    }

    private int u8(String what) throws IOException {
        take(1, what);
        int b = in.read();
        if (b < 0) {
            throw new EOFException("snapshot cut short in " + what);
        }
        return b;
    }

    private void take(long n, String what) throws IOException {
        if (n > maxBytes - consumed) {
            throw new IOException("snapshot larger than the limit of " + maxBytes + " bytes (at " + what + ")");
        }
        consumed += n;
    }

    private byte[] bytes(int n, String what) throws IOException {
        take(n, what);
        byte[] b = in.readNBytes(n);
        if (b.length < n) {
            throw new EOFException("snapshot cut short in " + what);
        }
        return b;
    }

    private long varint(String what) throws IOException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            int b = u8(what);
            v |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return v;
            }
        }
        throw new IOException("varint too long in " + what);
    }

    private int intVarint(String what) throws IOException {
        long v = varint(what);
        if (v < 0 || v > Integer.MAX_VALUE) {
            throw new IOException(what + " out of range: " + Long.toUnsignedString(v));
        }
        return (int) v;
    }

    private String string() throws IOException {
        int n = intVarint("string length");
        if (n > MAX_STRING_BYTES) {
            throw new IOException("string of " + n + " bytes is longer than " + MAX_STRING_BYTES);
        }
        return new String(bytes(n, "string"), StandardCharsets.UTF_8);
    }

    /** One partition's records, turned into stored events a chain at a time. */
    private static final class Payload implements SnapshotRecords.Sink {
        private final SnapshotRecords records;
        private final DumpHandler sink;
        private long[] ownerWorkers = new long[8];
        private int[] ownerRanks = new int[8];
        private int owners;
        private int events;
        private boolean exact;
        /** The owner of the last block record, or -1 after a watermark. */
        private int lastOwner = -1;

        /**
         * Each owner's chain being gathered: the holders of one block are written one after another, so one owner's
         * chain goes on across the records of the others.
         */
        private Run[] runs = new Run[8];

        /** One owner's blocks of one tier and kind, each the parent of the next. */
        private static final class Run {
            final int owner;
            int tier;
            boolean bySequence;
            boolean hasParent;
            long parent;
            long[] blocks = new long[16];
            long[] tokens = new long[16];
            int length;

            Run(int owner) {
                this.owner = owner;
            }

            long last() {
                return blocks[length - 1];
            }

            void add(long block, long tokensHash) {
                if (length == blocks.length) {
                    blocks = Arrays.copyOf(blocks, length * 2);
                    tokens = Arrays.copyOf(tokens, length * 2);
                }
                blocks[length] = block;
                tokens[length] = tokensHash;
                length++;
            }
        }

        Payload(byte[] payload, DumpHandler sink) {
            this.records = new SnapshotRecords(payload);
            this.sink = sink;
        }

        void read() throws IOException {
            while (records.hasNext()) {
                records.next(this);
            }
            flushAll();
            if (!exact) {
                sink.exactSnapshot();
            }
        }

        @Override
        public void block(
                int owner,
                long workerId,
                int dpRank,
                StorageTier tier,
                boolean bySequence,
                boolean hasParent,
                long parent,
                long block,
                long tokens) {
            if (owner == owners) {
                if (owners == runs.length) {
                    ownerWorkers = Arrays.copyOf(ownerWorkers, owners * 2);
                    ownerRanks = Arrays.copyOf(ownerRanks, owners * 2);
                    runs = Arrays.copyOf(runs, owners * 2);
                }
                ownerWorkers[owners] = workerId;
                ownerRanks[owners] = dpRank;
                runs[owners] = new Run(owners);
                owners++;
            }
            lastOwner = owner;
            int t = tier.ordinal();
            Run run = runs[owner];
            boolean goesOn = run.length > 0
                    && run.tier == t
                    && run.bySequence == bySequence
                    && hasParent
                    && parent == run.last();
            if (!goesOn) {
                flush(run);
                run.tier = t;
                run.bySequence = bySequence;
                run.hasParent = hasParent;
                run.parent = parent;
            }
            run.add(block, tokens);
        }

        @Override
        public void copies(int copies) throws IOException {
            Run run = lastOwner >= 0 ? runs[lastOwner] : null;
            if (run == null || run.length == 0) {
                throw records.malformed("copies " + copies + " with no block before it");
            }
            // The count belongs to the last block alone: it becomes an event of its own.
            if (run.length > 1) {
                long last = run.last();
                long lastTokens = run.tokens[run.length - 1];
                run.length--;
                long parent = run.last();
                flush(run);
                run.hasParent = true;
                run.parent = parent;
                run.add(last, lastTokens);
            }
            flush(run);
            sink.copies(events - 1, copies);
        }

        @Override
        public void watermark(long workerId, int dpRank, long seq) {
            flushAll();
            lastOwner = -1;
            if (!exact) {
                exact = true;
                sink.exactSnapshot();
            }
            sink.watermark(workerId, dpRank, seq);
        }

        @Override
        public void loss(long workerId, int dpRank, long batches) {
            sink.loss(workerId, dpRank, batches);
        }

        private void flushAll() {
            for (int i = 0; i < owners; i++) {
                flush(runs[i]);
            }
        }

        private void flush(Run run) {
            if (run.length == 0) {
                return;
            }
            long[] blocks = Arrays.copyOf(run.blocks, run.length);
            StorageTier tier = TIERS[run.tier];
            KvEvent event = run.bySequence
                    ? new KvEvent.StoredBySequence(tier, run.hasParent, run.parent, blocks)
                    : new KvEvent.Stored(
                            tier, run.hasParent, run.parent, blocks, Arrays.copyOf(run.tokens, run.length));
            sink.event(ownerWorkers[run.owner], ownerRanks[run.owner], event);
            events++;
            run.length = 0;
        }
    }
}
