package dev.kvindexer.query;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.WorkerRank;
import dev.kvindexer.hash.LocalHashes;
import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.OwnerMatches;
import dev.kvindexer.index.TieredMatch;
import dev.kvindexer.metrics.QueryQuality;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PromptHashes;
import dev.kvindexer.partition.QueryResult;
import dev.kvindexer.partition.TieredQueryResult;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What the query routes of every API and the selection service ask of the index, in one place: a partition's matches
 * with the shared stores' reach, its match tier by tier, an engine's chain along a prompt. Each query a router asks is
 * counted in the routing-quality metrics. A partition removed while it was asked fails the future with
 * {@code PartitionGoneException}; what that means to a client is the caller's to say.
 */
public final class IndexQueries {
    private final Registry registry;
    private final QueryQuality quality;

    public IndexQueries(Registry registry, QueryQuality quality) {
        this.registry = registry;
        this.quality = quality;
    }

    public Optional<PartitionRef> partition(PartitionKey key) {
        return registry.partition(key);
    }

    /**
     * A prompt's matches with the shared stores' reach, counted as a query of {@code queryTokens} tokens.
     *
     * @param kind what the hashes name: local, rolling sequence or engine hashes
     */
    public Future<Answer> query(PartitionRef partition, long[] hashes, PromptHashes kind, long queryTokens) {
        return answer(partition, partition.query(kind, hashes), queryTokens);
    }

    /** {@link #query(PartitionRef, long[], PromptHashes, long)} of a prompt hashed as the walk reaches its blocks. */
    public Future<Answer> query(PartitionRef partition, LocalHashes hashes, long queryTokens) {
        return answer(partition, partition.query(hashes), queryTokens);
    }

    private Future<Answer> answer(PartitionRef partition, Future<QueryResult> result, long queryTokens) {
        PartitionKey key = partition.key();
        return result.map(r -> {
            OwnerMatches matches = withSharedReach(r, () -> registry.members(key));
            observe(quality, key, queryTokens, matches, r.blockSize());
            return new Answer(r, matches);
        });
    }

    /**
     * {@link #query}'s matches as each instance's best reach through device and host memory, in blocks (SGLang's
     * servable tiers, HBM and DRAM); instances that reach nothing are left out.
     */
    public Future<Map<Long, Integer>> hostReach(
            PartitionRef partition, long[] hashes, PromptHashes kind, long queryTokens) {
        return query(partition, hashes, kind, queryTokens).map(answer -> {
            OwnerMatches m = answer.matches();
            Map<Long, Integer> best = new HashMap<>();
            for (int i = 0; i < m.size(); i++) {
                if (m.cpuBlocks(i) > 0) {
                    best.merge(m.workerId(i), m.cpuBlocks(i), Math::max);
                }
            }
            return best;
        });
    }

    /**
     * The partition's reply, and its matches with an entry for every registered engine rank the shared stores reach
     * that has none of its own.
     */
    public record Answer(QueryResult result, OwnerMatches matches) {}

    /** A prompt's match tier by tier, counted as a query of {@code queryTokens} tokens. */
    public Future<TieredQueryResult> queryTiered(PartitionRef partition, long[] hashes, long queryTokens) {
        return partition.queryTiered(hashes).map(r -> {
            observe(quality, partition.key(), queryTokens, r);
            return r;
        });
    }

    /**
     * A selection's read of a prompt tier by tier; null when the partition has no index. Not counted: a selection is
     * not a router's query, and its booking is what the metrics of the selection service count.
     */
    public Future<TieredQueryResult> matchForSelection(PartitionKey key, long[] hashes) {
        Optional<PartitionRef> p = registry.partition(key);
        return p.isEmpty() ? Future.succeededFuture(null) : p.get().queryTiered(hashes);
    }

    /**
     * The engine hashes one rank holds along a prompt from its first block, device then host pinned, at most
     * {@code maxBlocks}; empty when it holds none or the partition has no index.
     */
    public Future<long[]> engineChain(PartitionKey key, long workerId, int dpRank, long[] hashes, int maxBlocks) {
        Optional<PartitionRef> p = registry.partition(key);
        return p.isEmpty()
                ? Future.succeededFuture(new long[0])
                : p.get().engineHashes(workerId, dpRank, hashes, maxBlocks);
    }

    /** A registered rank that holds nothing of the prompt itself: the shared stores' reach, gpu 0. */
    public static OwnerMatch sharedOnly(long workerId, int dpRank, QueryResult reply) {
        return new OwnerMatch(workerId, dpRank, 0, reply.sharedReach()[0], reply.sharedReach()[1]);
    }

    /**
     * The matches plus, when the partition's Mooncake Stores hold a prefix of the prompt, an entry for every
     * registered engine rank that has none: the Dynamo flavor lists every instance with a block in any tier.
     */
    static OwnerMatches withSharedReach(QueryResult reply, Supplier<List<Registry.Member>> registered) {
        OwnerMatches matches = reply.owners();
        if (reply.sharedReach()[1] == 0) {
            return matches; // no store holds the prompt: the common case costs nothing
        }
        List<Registry.Member> members = registered.get();
        Set<WorkerRank> seen = new HashSet<>();
        for (int i = 0; i < matches.size(); i++) {
            seen.add(new WorkerRank(matches.workerId(i), matches.dpRank(i)));
        }
        List<OwnerMatch> shared = new ArrayList<>();
        for (Registry.Member member : members) {
            for (int rank : member.dpRanks()) {
                if (!member.store() && !seen.contains(new WorkerRank(member.workerId(), rank))) {
                    shared.add(sharedOnly(member.workerId(), rank, reply));
                }
            }
        }
        OwnerMatches.Builder out =
                OwnerMatches.builder(matches.size() + shared.size()).addAll(matches);
        shared.forEach(m -> out.add(m.workerId(), m.dpRank(), m.gpuBlocks(), m.cpuBlocks(), m.diskBlocks()));
        return out.build();
    }

    /**
     * Records a query of {@code queryTokens} tokens in the partition's routing-quality metrics: {@code matches} as
     * answered (cumulative over tiers, shared reach included). Sorts a copy of the matched ids instead of boxing them.
     */
    static void observe(QueryQuality quality, PartitionKey key, long queryTokens, OwnerMatches matches, int blockSize) {
        int best = 0;
        long[] workers = new long[matches.size()];
        int n = 0;
        for (int i = 0; i < matches.size(); i++) {
            int reach = matches.diskBlocks(i);
            if (reach > 0) {
                best = Math.max(best, reach);
                workers[n++] = matches.workerId(i);
            }
        }
        Arrays.sort(workers, 0, n);
        int instances = 0;
        for (int i = 0; i < n; i++) {
            if (i == 0 || workers[i] != workers[i - 1]) {
                instances++;
            }
        }
        quality.record(key, blockSize, queryTokens, (long) best * blockSize, instances);
    }

    /**
     * {@link #observe} for a tier-by-tier match: an owner's reach is its device depth plus its lower-tier hits. Every
     * column is sorted by (worker unsigned, rank), so one merge over them sums each owner's blocks.
     */
    static void observe(QueryQuality quality, PartitionKey key, long queryTokens, TieredQueryResult result) {
        List<TieredMatch.Tier> lower = result.match().lowerTiers();
        TieredMatch.Owners[] columns = new TieredMatch.Owners[lower.size() + 1];
        columns[0] = result.match().device();
        for (int t = 0; t < lower.size(); t++) {
            columns[t + 1] = lower.get(t).hits();
        }
        int[] at = new int[columns.length];
        int best = 0;
        int instances = 0;
        boolean anyWorker = false;
        long lastWorker = 0;
        while (true) {
            int head = -1;
            for (int c = 0; c < columns.length; c++) {
                if (at[c] < columns[c].size()
                        && (head < 0 || compare(columns[c], at[c], columns[head], at[head]) < 0)) {
                    head = c;
                }
            }
            if (head < 0) {
                break;
            }
            long worker = columns[head].workers()[at[head]];
            int rank = columns[head].ranks()[at[head]];
            int reach = 0;
            for (int c = 0; c < columns.length; c++) {
                if (at[c] < columns[c].size()
                        && columns[c].workers()[at[c]] == worker
                        && columns[c].ranks()[at[c]] == rank) {
                    reach += columns[c].blocks()[at[c]++];
                }
            }
            if (reach > 0) {
                best = Math.max(best, reach);
                if (!anyWorker || worker != lastWorker) {
                    instances++;
                    anyWorker = true;
                    lastWorker = worker;
                }
            }
        }
        quality.record(key, result.blockSize(), queryTokens, (long) best * result.blockSize(), instances);
    }

    private static int compare(TieredMatch.Owners a, int i, TieredMatch.Owners b, int j) {
        int byWorker = Long.compareUnsigned(a.workers()[i], b.workers()[j]);
        return byWorker != 0 ? byWorker : Integer.compare(a.ranks()[i], b.ranks()[j]);
    }
}
