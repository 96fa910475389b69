package dev.kvindexer.dump;

/**
 * The binary snapshot that kvindexer nodes exchange for recovery instead of the JSON dump (a Dynamo peer still gets
 * JSON). Little-endian, varints unsigned LEB128.
 *
 * <pre>
 * document  := MAGIC VERSION section* END
 * section   := PARTITION string(model) string(group) varint(block_size) varint(length) payload[length]
 *            | FAILED string(model) string(group) string(error)
 * payload   := record*            (blocks parents first, then the watermarks)
 * record    := flags [owner] [parent:u64] [tokens:u64] [block:u64]
 *            | CONTROL COPIES varint(copies)                 the previous block is held that many times
 *            | CONTROL WATERMARK u64(worker) varint(dp_rank) u64(seq)
 *            | CONTROL LOSS u64(worker) varint(dp_rank) varint(batches)   after the stream's watermark: it lost that
 *                                                                   many batches for good (written only then)
 * owner     := varint(index)  an owner defined before, or the next index followed by u64(worker) varint(dp_rank)
 * </pre>
 *
 * Each block record leaves out what the previous record already says: its owner, its parent (when the parent is
 * the previous block, as down a chain written depth first; or, for another holder of the previous block, when it is
 * that record's parent), its tokens hash and its block hash (both shared by the holders of one block). A chain of
 * single-holder blocks costs 17 bytes a block; with h holders of the same hashes a block costs 16 + 2h.
 */
final class SnapshotFormat {
    static final byte[] MAGIC = {'K', 'V', 'S', 'N', 'A', 'P'};
    static final int VERSION = 1;
    static final int PARTITION = 'P';
    static final int FAILED = 'F';
    static final int END = 'E';

    static final int TIER_MASK = 0x03;
    static final int HAS_PARENT = 0x04;
    static final int PARENT_IS_PREVIOUS = 0x08;
    static final int SAME_OWNER = 0x10;
    static final int SAME_TOKENS = 0x20;
    static final int SAME_BLOCK = 0x40;
    /** A block stored without tokens: no tokens hash, its block hash is its sequence hash. */
    static final int BY_SEQUENCE = 0x80;
    /** {@code PARENT_IS_PREVIOUS} without {@code HAS_PARENT} cannot be a block: it starts a control record. */
    static final int CONTROL = PARENT_IS_PREVIOUS;

    static final int COPIES = 1;
    static final int WATERMARK = 2;
    static final int LOSS = 3;

    /** The media type a node asks a peer's /dump for. */
    static final String MEDIA_TYPE = "application/x-kvindexer-snapshot";

    private SnapshotFormat() {}
}
