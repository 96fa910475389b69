package dev.kvindexer.dump;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.BlockVisitor;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Writes one partition's content as a binary snapshot payload ({@link SnapshotFormat}), and the document around
 * the payloads. Fed depth first, so a chain's parent is the record before.
 */
public final class SnapshotWriter implements BlockVisitor {
    /** The media type of a binary snapshot document. */
    public static final String MEDIA_TYPE = SnapshotFormat.MEDIA_TYPE;

    private final Bytes out = new Bytes(1 << 12);
    private final Map<Long, Map<Integer, Integer>> ownerIndex = new HashMap<>();
    private int owners;
    private int previousOwner = -1;
    private long previousTokens;
    private long previousBlock;
    private boolean previousHasParent;
    private long previousParent;
    private boolean previousIsBlock;

    @Override
    public void stored(
            long workerId,
            int dpRank,
            StorageTier tier,
            boolean hasParent,
            long parentHash,
            long blockHash,
            long tokensHash) {
        record(workerId, dpRank, tier, hasParent, parentHash, blockHash, tokensHash, false);
    }

    @Override
    public void storedBySequence(
            long workerId, int dpRank, StorageTier tier, boolean hasParent, long parentHash, long sequenceHash) {
        record(workerId, dpRank, tier, hasParent, parentHash, sequenceHash, 0, true);
    }

    @Override
    public void copies(int copies) {
        out.put(SnapshotFormat.CONTROL).put(SnapshotFormat.COPIES).varint(copies);
    }

    /** The last applied seq of stream (worker, registered dp_rank); written after every block. */
    public void watermark(long workerId, int dpRank, long seq) {
        out.put(SnapshotFormat.CONTROL)
                .put(SnapshotFormat.WATERMARK)
                .u64(workerId)
                .varint(dpRank)
                .u64(seq);
        previousIsBlock = false;
    }

    /**
     * Stream (worker, registered dp_rank) lost {@code batches} batches for good: the blocks written for it are not
     * exactly the engine's. Written after its watermark, and only for such a stream.
     */
    public void loss(long workerId, int dpRank, long batches) {
        out.put(SnapshotFormat.CONTROL)
                .put(SnapshotFormat.LOSS)
                .u64(workerId)
                .varint(dpRank)
                .varint(batches);
        previousIsBlock = false;
    }

    private void record(
            long workerId,
            int dpRank,
            StorageTier tier,
            boolean hasParent,
            long parentHash,
            long blockHash,
            long tokensHash,
            boolean bySequence) {
        Map<Integer, Integer> ranks = ownerIndex.computeIfAbsent(workerId, w -> new HashMap<>(2));
        Integer known = ranks.get(dpRank);
        int owner = known != null ? known : owners;
        int flags = tier.ordinal();
        boolean sameBlock = previousIsBlock && blockHash == previousBlock;
        if (hasParent) {
            flags |= SnapshotFormat.HAS_PARENT;
            // Another holder of the previous block has, as a rule, its parent too; any other block may be a child.
            if (sameBlock
                    ? previousHasParent && parentHash == previousParent
                    : previousIsBlock && parentHash == previousBlock) {
                flags |= SnapshotFormat.PARENT_IS_PREVIOUS;
            }
        }
        if (owner == previousOwner) {
            flags |= SnapshotFormat.SAME_OWNER;
        }
        if (bySequence) {
            flags |= SnapshotFormat.BY_SEQUENCE;
        } else if (previousIsBlock && tokensHash == previousTokens) {
            flags |= SnapshotFormat.SAME_TOKENS;
        }
        if (sameBlock) {
            flags |= SnapshotFormat.SAME_BLOCK;
        }
        out.put(flags);
        if ((flags & SnapshotFormat.SAME_OWNER) == 0) {
            out.varint(owner);
            if (known == null) {
                ranks.put(dpRank, owners++);
                out.u64(workerId).varint(dpRank);
            }
        }
        if (hasParent && (flags & SnapshotFormat.PARENT_IS_PREVIOUS) == 0) {
            out.u64(parentHash);
        }
        if (!bySequence && (flags & SnapshotFormat.SAME_TOKENS) == 0) {
            out.u64(tokensHash);
        }
        if ((flags & SnapshotFormat.SAME_BLOCK) == 0) {
            out.u64(blockHash);
        }
        previousOwner = owner;
        previousTokens = bySequence ? 0 : tokensHash;
        previousBlock = blockHash;
        previousHasParent = hasParent;
        previousParent = parentHash;
        previousIsBlock = true;
    }

    /** The payload written so far. */
    public byte[] finish() {
        return out.toArray();
    }

    /** Whether a request's Accept header asks for a binary snapshot rather than the JSON dump. */
    public static boolean acceptedBy(String accept) {
        return accept != null && accept.toLowerCase(java.util.Locale.ROOT).contains(MEDIA_TYPE);
    }

    /** The document's start. */
    public static byte[] header() {
        return new Bytes(8)
                .put(SnapshotFormat.MAGIC)
                .put(SnapshotFormat.VERSION)
                .toArray();
    }

    /** A partition's section: its key, block size and payload length, to be followed by the payload itself. */
    public static byte[] sectionHead(PartitionKey key, int blockSize, int payloadLength) {
        return new Bytes(64)
                .put(SnapshotFormat.PARTITION)
                .string(key.modelName())
                .string(key.routingGroup())
                .varint(blockSize)
                .varint(payloadLength)
                .toArray();
    }

    /** A partition that could not be snapshotted: readers report it and go on. */
    public static byte[] failedSection(PartitionKey key, String error) {
        return new Bytes(64)
                .put(SnapshotFormat.FAILED)
                .string(key.modelName())
                .string(key.routingGroup())
                .string(String.valueOf(error))
                .toArray();
    }

    /** The document's end: a reader that never sees it knows the document was cut short. */
    public static byte[] end() {
        return new byte[] {(byte) SnapshotFormat.END};
    }

    /** A whole document of one partition's section, as /dump sends one instance and a peer reads it. */
    public static byte[] document(PartitionKey key, int blockSize, byte[] payload) {
        byte[] head = header();
        byte[] section = sectionHead(key, blockSize, payload.length);
        byte[] doc = new byte[head.length + section.length + payload.length + 1];
        System.arraycopy(head, 0, doc, 0, head.length);
        System.arraycopy(section, 0, doc, head.length, section.length);
        System.arraycopy(payload, 0, doc, head.length + section.length, payload.length);
        doc[doc.length - 1] = (byte) SnapshotFormat.END;
        return doc;
    }

    /** A growable byte array with the format's primitives. */
    private static final class Bytes {
        private byte[] buf;
        private int size;

        Bytes(int capacity) {
            buf = new byte[capacity];
        }

        private void room(int n) {
            if (size + n > buf.length) {
                buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + n));
            }
        }

        Bytes put(int b) {
            room(1);
            buf[size++] = (byte) b;
            return this;
        }

        Bytes put(byte[] bytes) {
            room(bytes.length);
            System.arraycopy(bytes, 0, buf, size, bytes.length);
            size += bytes.length;
            return this;
        }

        Bytes u64(long v) {
            room(8);
            for (int i = 0; i < 8; i++) {
                buf[size++] = (byte) (v >>> (8 * i));
            }
            return this;
        }

        Bytes varint(long v) {
            room(10);
            while ((v & ~0x7FL) != 0) {
                buf[size++] = (byte) ((v & 0x7F) | 0x80);
                v >>>= 7;
            }
            buf[size++] = (byte) v;
            return this;
        }

        Bytes string(String s) {
            byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
            return varint(utf8.length).put(utf8);
        }

        byte[] toArray() {
            return Arrays.copyOf(buf, size);
        }
    }
}
