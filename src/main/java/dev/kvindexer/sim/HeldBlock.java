package dev.kvindexer.sim;

/**
 * One block an engine holds, in the form an indexer's {@code /dump} reports it (docs/protocol/dump.md#json-document):
 * hashes are
 * unsigned 64-bit bit patterns in {@code long}s, {@code parentHash} null at the root.
 */
public record HeldBlock(long worker, int dpRank, String tier, long blockHash, Long parentHash, long tokensHash) {
    /** Dump tier names (docs/protocol/index.md#storage-tiers). */
    public static final String DEVICE = "device";

    public static final String HOST_PINNED = "host_pinned";

    @Override
    public String toString() {
        return "HeldBlock[worker=" + Long.toUnsignedString(worker) + ", dp=" + dpRank + ", " + tier
                + ", hash=" + Long.toUnsignedString(blockHash)
                + ", parent=" + (parentHash == null ? "null" : Long.toUnsignedString(parentHash))
                + ", tokens=" + Long.toUnsignedString(tokensHash) + "]";
    }
}
