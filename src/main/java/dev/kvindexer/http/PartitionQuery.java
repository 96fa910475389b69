package dev.kvindexer.http;

import dev.kvindexer.index.OwnerKey;
import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.partition.PartitionGoneException;
import dev.kvindexer.partition.QueryResult;
import io.vertx.ext.web.RoutingContext;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.web.HttpError;
import io.vertx.core.Future;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.index.TieredMatch;
import dev.kvindexer.metrics.QueryQuality;
import dev.kvindexer.partition.TieredQueryResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/** What either flavor's query routes make of a partition's match: its failures as HTTP errors, shared reach. */
final class PartitionQuery {
    private PartitionQuery() {
    }

    /**
     * Fails with {@code gone} when the partition was removed between the registry lookup and the request, and with
     * a 500 for any other failure of the partition.
     */
    static <T> Future<T> answered(Future<T> asked, HttpError gone) {
        return asked.recover(t -> Future.failedFuture(t instanceof PartitionGoneException ? gone
                : new HttpError(500, "indexer failure: " + t.getMessage())));
    }

    /** A registered rank that holds nothing of the prompt itself: the shared stores' reach, gpu 0. */
    static OwnerMatch sharedOnly(long workerId, int dpRank, QueryResult reply) {
        return new OwnerMatch(workerId, dpRank, 0, reply.sharedReach()[0], reply.sharedReach()[1]);
    }

    /**
     * The matches plus, when the partition's Mooncake Stores hold a prefix of the prompt, an entry for every
     * registered engine rank that has none: the Dynamo flavor lists every instance with a block in any tier.
     */
    static List<OwnerMatch> withSharedReach(QueryResult reply, Supplier<List<Registry.Member>> registered) {
        List<OwnerMatch> matches = reply.matches();
        if (reply.sharedReach()[1] == 0) {
            return matches; // no store holds the prompt: the common case costs nothing
        }
        List<Registry.Member> members = registered.get();
        List<OwnerMatch> out = new ArrayList<>(matches);
        Set<OwnerKey> seen = new HashSet<>();
        matches.forEach(m -> seen.add(new OwnerKey(m.workerId(), m.dpRank())));
        for (Registry.Member member : members) {
            for (int rank : member.dpRanks()) {
                if (!member.store() && !seen.contains(new OwnerKey(member.workerId(), rank))) {
                    out.add(sharedOnly(member.workerId(), rank, reply));
                }
            }
        }
        return out;
    }

    /**
     * Records a query of {@code queryTokens} tokens in the partition's routing-quality metrics: {@code matches} as
     * answered (cumulative over tiers, shared reach included).
     */
    static void observe(QueryQuality quality, PartitionKey key, long queryTokens, List<OwnerMatch> matches,
                        int blockSize) {
        int best = 0;
        Set<Long> instances = new HashSet<>();
        for (OwnerMatch m : matches) {
            if (m.diskBlocks() > 0) {
                best = Math.max(best, m.diskBlocks());
                instances.add(m.workerId());
            }
        }
        quality.record(key, blockSize, queryTokens, (long) best * blockSize, instances.size());
    }

    /** {@link #observe} for a tier-by-tier match: an owner's reach is its device depth plus its lower-tier hits. */
    static void observe(QueryQuality quality, PartitionKey key, long queryTokens, TieredQueryResult result) {
        Map<OwnerKey, Integer> reach = new HashMap<>();
        addReach(reach, result.match().device());
        result.match().lowerTiers().forEach(t -> addReach(reach, t.hits()));
        int best = 0;
        Set<Long> instances = new HashSet<>();
        for (Map.Entry<OwnerKey, Integer> e : reach.entrySet()) {
            if (e.getValue() > 0) {
                best = Math.max(best, e.getValue());
                instances.add(e.getKey().workerId());
            }
        }
        quality.record(key, result.blockSize(), queryTokens, (long) best * result.blockSize(), instances.size());
    }

    private static void addReach(Map<OwnerKey, Integer> reach, TieredMatch.Owners owners) {
        for (int i = 0; i < owners.size(); i++) {
            reach.merge(new OwnerKey(owners.workers()[i], owners.ranks()[i]), owners.blocks()[i], Integer::sum);
        }
    }

    /** Response header naming how many registered instances a sharded cluster could not answer for. */
    static final String MISSING_INSTANCES = "x-kvindexer-missing-instances";

    /** Says so in a header when instances are missing from the answer (their shard had no live holder). */
    static void flagMissing(RoutingContext ctx, int missingInstances) {
        if (missingInstances > 0) {
            ctx.response().putHeader(MISSING_INSTANCES, Integer.toString(missingInstances));
        }
    }
}
