package dev.kvindexer.http;

import dev.kvindexer.partition.PartitionBus;
import dev.kvindexer.partition.PartitionMessages;
import dev.kvindexer.registry.PartitionEntry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

/** Asks a partition actor to match a prompt's local hashes, for either flavor's query routes. */
final class PartitionQuery {
    private PartitionQuery() {
    }

    /** Fails with {@code gone} when the partition was removed between the registry lookup and the request. */
    static Future<PartitionMessages.QueryReply> ask(Vertx vertx, PartitionEntry partition, long[] hashes, HttpError gone) {
        return PartitionBus.<PartitionMessages.QueryReply>request(vertx.eventBus(), partition.address(),
                        new PartitionMessages.Query(hashes))
                .map(m -> m.body())
                .recover(t -> Future.failedFuture(isNoHandler(t) ? gone
                        : new HttpError(500, "indexer failure: " + t.getMessage())));
    }

    private static boolean isNoHandler(Throwable t) {
        return t instanceof ReplyException && ((ReplyException) t).failureType() == ReplyFailure.NO_HANDLERS;
    }
}
