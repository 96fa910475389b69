package dev.kvindexer.index;

/** Applies every dumped event of an index to a fresh one (the recovery path of a peer). */
final class DumpReplay {
    private DumpReplay() {
    }

    static PartitionIndex replay(PartitionIndex source) {
        PartitionIndex copy = new PartitionIndex(source.blockSize());
        source.dump((worker, rank, tier, hasParent, parent, hash, local) -> {
            StoreOutcome out = copy.store(worker, rank, tier, hasParent, parent, new long[] {hash}, new long[] {local});
            if (out != StoreOutcome.OK) {
                throw new AssertionError("dumped event did not replay: " + out);
            }
        });
        return copy;
    }
}
