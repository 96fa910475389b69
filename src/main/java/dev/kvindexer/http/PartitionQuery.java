package dev.kvindexer.http;

import dev.kvindexer.index.OwnerKey;
import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.partition.PartitionBus;
import dev.kvindexer.partition.PartitionMessages;
import dev.kvindexer.registry.PartitionEntry;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/** Asks a partition actor to match a prompt's local hashes, for either flavor's query routes. */
final class PartitionQuery {
    private PartitionQuery() {
    }

    /** Fails with {@code gone} when the partition was removed between the registry lookup and the request. */
    static Future<PartitionMessages.QueryReply> ask(Vertx vertx, PartitionEntry partition, long[] hashes, HttpError gone) {
        return ask(vertx, partition, new PartitionMessages.Query(hashes), gone);
    }

    static Future<PartitionMessages.QueryReply> ask(Vertx vertx, PartitionEntry partition, PartitionMessages.Query query,
                                                    HttpError gone) {
        return request(vertx, partition, query, gone);
    }

    /** The match tier by tier, for Dynamo's remote-indexer lookup; fails as {@link #ask} does. */
    static Future<PartitionMessages.TieredReply> askTiered(Vertx vertx, PartitionEntry partition, long[] hashes,
                                                           HttpError gone) {
        return request(vertx, partition, new PartitionMessages.TieredQuery(hashes), gone);
    }

    private static <R> Future<R> request(Vertx vertx, PartitionEntry partition, Object message, HttpError gone) {
        return PartitionBus.<R>request(vertx.eventBus(), partition.address(), message)
                .map(m -> m.body())
                .recover(t -> Future.failedFuture(isNoHandler(t) ? gone
                        : new HttpError(500, "indexer failure: " + t.getMessage())));
    }

    /** A registered rank that holds nothing of the prompt itself: the shared stores' reach, gpu 0. */
    static OwnerMatch sharedOnly(long workerId, int dpRank, PartitionMessages.QueryReply reply) {
        return new OwnerMatch(workerId, dpRank, 0, reply.sharedReach()[0], reply.sharedReach()[1]);
    }

    /**
     * The matches plus, when the partition's Mooncake Stores hold a prefix of the prompt, an entry for every
     * registered engine rank that has none: the Dynamo flavor lists every instance with a block in any tier.
     */
    static List<OwnerMatch> withSharedReach(PartitionMessages.QueryReply reply, Supplier<List<Registry.Member>> registered) {
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
                if (!member.store() && !seen.contains(new OwnerKey(member.instanceId(), rank))) {
                    out.add(sharedOnly(member.instanceId(), rank, reply));
                }
            }
        }
        return out;
    }

    private static boolean isNoHandler(Throwable t) {
        return t instanceof ReplyException && ((ReplyException) t).failureType() == ReplyFailure.NO_HANDLERS;
    }
}
