package dev.kvindexer.http;

import dev.kvindexer.partition.PartitionGoneException;
import dev.kvindexer.web.HttpError;
import io.vertx.core.Future;
import io.vertx.ext.web.RoutingContext;

/** What either flavor's query routes make of a partition's answer over HTTP: its failures as errors, missing instances as a header. */
final class PartitionQuery {
    private PartitionQuery() {}

    /**
     * Fails with {@code gone} when the partition was removed between the registry lookup and the request, and with
     * a 500 for any other failure of the partition.
     */
    static <T> Future<T> answered(Future<T> asked, HttpError gone) {
        return asked.recover(t -> Future.failedFuture(
                t instanceof PartitionGoneException ? gone : new HttpError(500, "indexer failure: " + t.getMessage())));
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
