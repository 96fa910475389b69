package dev.kvindexer.grpc;

import it.unimi.dsi.fastutil.longs.LongOpenHashSet;

/** One worker of SGLang's contract as {@link ExternalKvIndex} keeps it: where it is reached, its spec and fence. */
final class ExternalWorker {
    final String id;
    /** Its number in the blocks' placements; reused after the worker goes. */
    final int slot;

    String address = "";
    /** Null: no spec sent, whole blocks only. */
    CacheSpec spec;

    boolean ready;
    /** The epoch of its installed snapshot or enforced stream, or null. */
    String epoch;

    long lastSeq;
    boolean hasLastSeq;
    /** The hashes it holds per tier (indexed by tier number), so a clear or a removal finds them. */
    final LongOpenHashSet[] holdings = new LongOpenHashSet[ExternalKvIndex.TIERS];

    ExternalWorker(String id, int slot) {
        this.id = id;
        this.slot = slot;
    }

    /** The placements it holds, all tiers together. */
    long placementCount() {
        long n = 0;
        for (LongOpenHashSet held : holdings) {
            n += held == null ? 0 : held.size();
        }
        return n;
    }

    LongOpenHashSet holdings(int tier) {
        LongOpenHashSet held = holdings[tier];
        if (held == null) {
            held = holdings[tier] = new LongOpenHashSet();
        }
        return held;
    }
}
