package dev.kvindexer.selectservice;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.partition.TieredQueryResult;
import dev.kvindexer.registry.RegisterRequest;
import io.vertx.core.Future;
import io.vertx.core.http.HttpServerResponse;
import java.util.List;

/**
 * What the selection service asks of the embedded indexer: the catalog registers its workers' publishers as the
 * indexer's {@code /register} would, and selections read the tiered match of their prompt.
 */
public interface IndexAccess {
    /**
     * Every rank's publisher of one worker, all or nothing: each is checked first, so a refusal (a conflict, no room
     * for the listeners) creates nothing; a listener that fails to start takes the others back out. A rank already
     * registered exactly as asked is left as it is, with its listener, its watermark and its blocks.
     */
    Future<Void> registerAll(List<RegisterRequest> requests);

    /** Every rank of a worker in a partition (nothing when it has none). */
    Future<Void> unregister(long workerId, PartitionKey partition);

    /** One rank of a worker in a partition: its listener stops and its blocks go. */
    Future<Void> unregisterRank(long workerId, PartitionKey partition, int dpRank);

    /**
     * Whether a rank is registered exactly as {@code r} asks already: in a cluster, another replica's selection
     * service may have applied the same update first.
     */
    boolean registeredAs(RegisterRequest r);

    /**
     * Creates the partition if it is new, so that /dump lists it before any event; fails when it exists with another
     * block size.
     */
    Future<Void> ensurePartition(PartitionKey partition, int blockSize);

    /** The prompt's match tier by tier; succeeds with null when the partition has no index. */
    Future<TieredQueryResult> queryTiered(PartitionKey partition, long[] localHashes);

    /**
     * The engine hashes one rank holds along a prompt from its first block, device then host pinned, at most
     * {@code maxBlocks}; empty when it holds none or the partition has no index.
     */
    Future<long[]> engineHashes(PartitionKey partition, long workerId, int dpRank, long[] localHashes, int maxBlocks);

    /** Applies standardized events to a partition (the approximate index of bookings); nothing when it is absent. */
    Future<Void> apply(PartitionKey partition, List<StandardEvent> events);

    /**
     * Answers {@code response} with the indexer's whole JSON {@code /dump} (docs/protocol/dump.md#json-document),
     * streamed.
     */
    Future<Void> dump(HttpServerResponse response);
}
