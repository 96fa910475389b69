package dev.kvindexer.partition;

/**
 * A partition's exact snapshot as one step of its actor took it: the binary payload (SnapshotWriter), and the
 * instances that belong in it but that no live node could give (a sharded cluster that lost every holder of them),
 * so a dump built from it never passes for whole.
 *
 * @param payload          the records of every held block, then every stream's watermark
 * @param missingInstances registered instances left out, in no order; empty when the snapshot is whole
 */
public record PartitionSnapshot(byte[] payload, long[] missingInstances) {
    private static final long[] NONE = new long[0];

    public static PartitionSnapshot whole(byte[] payload) {
        return new PartitionSnapshot(payload, NONE);
    }

    /** In which order the payload reports the device tree. */
    public enum Order {
        /** Level by level, the order of Dynamo's JSON {@code /dump}. */
        BREADTH_FIRST,
        /** A branch at a time, so down a chain each parent is the record before: the compact form peers recover from. */
        DEPTH_FIRST
    }
}
