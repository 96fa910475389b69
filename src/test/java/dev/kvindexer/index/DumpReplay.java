package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;

/** Applies every dumped event of an index to a fresh one (the recovery path of a peer), reference counts included. */
final class DumpReplay {
    private DumpReplay() {}

    static PartitionIndex replay(PartitionIndex source) {
        PartitionIndex copy = new PartitionIndex(source.blockSize());
        source.dump(new BlockVisitor() {
            Runnable last;

            @Override
            public void stored(
                    long worker, int rank, StorageTier tier, boolean hasParent, long parent, long hash, long local) {
                last = () -> {
                    StoreOutcome out =
                            copy.store(worker, rank, tier, hasParent, parent, new long[] {hash}, new long[] {local});
                    if (out != StoreOutcome.OK) {
                        throw new AssertionError("dumped event did not replay: " + out);
                    }
                };
                last.run();
            }

            @Override
            public void copies(int copies) {
                for (int i = 1; i < copies; i++) {
                    last.run();
                }
            }
        });
        return copy;
    }
}
