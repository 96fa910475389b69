package dev.kvindexer.load;

import dev.kvindexer.event.PartitionKey;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.TreeMap;

/** What a {@link SlotTracker} holds, per (model, routing group): its workers, their ranks and the active requests. */
final class TrackerState {
    private TrackerState() {}

    static final class Scope {
        final PartitionKey key;
        final int blockSize;
        final TreeMap<Long, Worker> workers = new TreeMap<>(Long::compareUnsigned);
        /** In add order, which is expiry order: the clock is monotonic. */
        final LinkedHashMap<String, Request> requests = new LinkedHashMap<>();
        /** The ranks each active sequence hash is held by. */
        final HashHolders holders = new HashHolders();
        /** Rank indexes for {@link #holders}: dense, those of unregistered workers used again. */
        private final IntArrayList freeIndexes = new IntArrayList();

        int indexes;

        /** A rank joining the scope, with no load, under a free index. */
        Rank newRank() {
            return new Rank(holders, freeIndexes.isEmpty() ? indexes++ : freeIndexes.popInt());
        }

        /** A rank leaving the scope: its holdings go and its index is free again. */
        void retire(Rank r) {
            r.leave();
            freeIndexes.push(r.index);
        }

        Scope(PartitionKey key, int blockSize) {
            this.key = key;
            this.blockSize = blockSize;
        }
    }

    static final class Worker {
        final long id;
        final Scope scope;
        long dpStart;
        Rank[] ranks;

        Worker(long id, long dpStart, int dpSize, Scope scope) {
            this.id = id;
            this.scope = scope;
            this.dpStart = dpStart;
            this.ranks = new Rank[dpSize];
            for (int i = 0; i < dpSize; i++) {
                ranks[i] = scope.newRank();
            }
        }

        Rank rank(long dpRank) {
            long i = dpRank - dpStart;
            return i >= 0 && i < ranks.length ? ranks[(int) i] : null;
        }
    }

    static final class Rank {
        long prefillTokens;
        int requests;
        /** Output blocks of its active requests: each is its request's own, so they are counted, not keyed. */
        long outputBlocks;
        /** Sequence hash → how many active requests of this rank hold it. */
        final Long2IntOpenHashMap blocks = new Long2IntOpenHashMap();
        /** Its active requests whose own blocks weigh less than one (an output block's decay fraction). */
        final List<Request> decayed = new ArrayList<>(0);
        /** Its scope's holders, which list this rank (by {@link #index}) for every hash in {@link #blocks}. */
        final HashHolders holders;

        final int index;

        Rank(HashHolders holders, int index) {
            this.holders = holders;
            this.index = index;
        }

        void hold(long hash) {
            if (blocks.addTo(hash, 1) == 0) {
                holders.add(hash, index);
            }
        }

        void letGo(long hash) {
            if (blocks.addTo(hash, -1) == 1) {
                blocks.remove(hash);
                holders.remove(hash, index);
            }
        }

        SlotTracker.ActiveLoad load(int activeDepth) {
            return new SlotTracker.ActiveLoad(prefillTokens, decodeBlocks(), requests, activeDepth);
        }

        /** Its distinct blocks and output blocks, each block only its decayed request holds weighed by that decay. */
        long decodeBlocks() {
            double total = blocks.size() + outputBlocks;
            for (Request r : decayed) {
                long own = r.outputBlocks;
                for (long h : r.hashes) {
                    if (blocks.get(h) == 1) {
                        own++;
                    }
                }
                total -= (1.0 - r.decay) * own;
            }
            return Math.round(total);
        }

        /** Takes this rank off the holders of everything it holds: its worker is going. */
        void leave() {
            for (long hash : blocks.keySet()) {
                holders.remove(hash, index);
            }
        }
    }

    static final class Request {
        final String id;
        final Worker worker;
        final long dpRank;
        final Rank rank;
        final long[] hashes;
        final long newIslTokens;
        final long addedAt;
        boolean prefillPending;
        long outputBlocks;
        /** The weight of the blocks only this request holds; 1 until an output block sets it. */
        double decay = 1.0;

        Request(String id, Worker worker, long dpRank, long[] hashes, long newIslTokens, long addedAt) {
            this.id = id;
            this.worker = worker;
            this.dpRank = dpRank;
            this.rank = worker.rank(dpRank);
            this.hashes = hashes;
            this.newIslTokens = newIslTokens;
            this.addedAt = addedAt;
            this.prefillPending = true;
        }
    }
}
