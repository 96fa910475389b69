package dev.kvindexer.cluster;

import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.OwnerMatches;
import dev.kvindexer.index.TieredMatch;
import dev.kvindexer.partition.QueryResult;
import dev.kvindexer.partition.TieredQueryResult;
import io.vertx.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A scattered query's answer being assembled from this node's part and the holders' replies, each reply counted only
 * for the instances its node served.
 */
interface ShardGather<R> {
    /** Takes a holder's reply for the instances {@code asked}; returns those among them it served. */
    Set<Long> addReply(Buffer reply, Set<Long> asked);

    /** An instance no live node answered for. */
    void missing();

    R result();

    private static Set<Long> servedOf(long[] served, Set<Long> asked) {
        Set<Long> out = new HashSet<>();
        for (long w : served) {
            if (asked.contains(w)) {
                out.add(w);
            }
        }
        return out;
    }

    static List<OwnerMatch> only(List<OwnerMatch> matches, Set<Long> workers) {
        List<OwnerMatch> out = new ArrayList<>();
        for (OwnerMatch m : matches) {
            if (workers.contains(m.workerId())) {
                out.add(m);
            }
        }
        return out;
    }

    static TieredMatch only(TieredMatch m, Set<Long> workers) {
        List<TieredMatch.Tier> tiers = new ArrayList<>();
        m.lowerTiers().forEach(t -> tiers.add(new TieredMatch.Tier(t.tier(), only(t.hits(), workers))));
        return new TieredMatch(only(m.device(), workers), tiers);
    }

    static TieredMatch.Owners only(TieredMatch.Owners o, Set<Long> workers) {
        int n = 0;
        for (int i = 0; i < o.size(); i++) {
            n += workers.contains(o.workers()[i]) ? 1 : 0;
        }
        long[] ws = new long[n];
        int[] ranks = new int[n];
        int[] blocks = new int[n];
        for (int i = 0, k = 0; i < o.size(); i++) {
            if (workers.contains(o.workers()[i])) {
                ws[k] = o.workers()[i];
                ranks[k] = o.ranks()[i];
                blocks[k++] = o.blocks()[i];
            }
        }
        return new TieredMatch.Owners(ws, ranks, blocks);
    }

    /** Per-instance matches: this node's instances, then each holder's for the instances it served. */
    static final class Query implements ShardGather<QueryResult> {
        private final int blockSize;
        private final List<OwnerMatch> owners;
        private final int[] reach;
        private int missing;

        Query(QueryResult local, Set<Long> mine) {
            blockSize = local.blockSize();
            owners = only(local.matches(), mine);
            reach = local.sharedReach().clone();
        }

        @Override
        public Set<Long> addReply(Buffer body, Set<Long> asked) {
            ShardQueryCodec.Reply r = ShardQueryCodec.decodeReply(body);
            Set<Long> served = servedOf(r.served(), asked);
            owners.addAll(only(r.owners(), served));
            reach[0] = Math.max(reach[0], r.sharedReach()[0]);
            reach[1] = Math.max(reach[1], r.sharedReach()[1]);
            return served;
        }

        @Override
        public void missing() {
            missing++;
        }

        @Override
        public QueryResult result() {
            return new QueryResult(blockSize, OwnerMatches.of(owners), reach.clone(), missing);
        }
    }

    /** Tier-by-tier matches of disjoint instances, merged as one index holding them all would answer. */
    static final class Tiered implements ShardGather<TieredQueryResult> {
        private final int blockSize;
        private final TieredMerge merge = new TieredMerge();
        private int missing;

        Tiered(TieredQueryResult local, Set<Long> mine) {
            blockSize = local.blockSize();
            merge.add(only(local.match(), mine));
        }

        @Override
        public Set<Long> addReply(Buffer body, Set<Long> asked) {
            ShardQueryCodec.TieredReply r = ShardQueryCodec.decodeTieredReply(body);
            Set<Long> served = servedOf(r.served(), asked);
            merge.add(only(r.match(), served));
            return served;
        }

        @Override
        public void missing() {
            missing++;
        }

        @Override
        public TieredQueryResult result() {
            return new TieredQueryResult(blockSize, merge.result(), missing);
        }
    }
}
