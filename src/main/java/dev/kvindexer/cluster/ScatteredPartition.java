package dev.kvindexer.cluster;

import dev.kvindexer.partition.ForwardingPartition;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PartitionSnapshot;
import dev.kvindexer.partition.PromptHashes;
import dev.kvindexer.partition.QueryResult;
import dev.kvindexer.partition.TieredQueryResult;
import io.vertx.core.Future;

/**
 * A sharded partition as its callers see it: queries cover every instance of the cluster through
 * {@link ShardQueries}; everything else is the shards this node hosts (a rank whose shard lives on another node holds
 * nothing here, so its engine hashes are asked of this node alone).
 */
final class ScatteredPartition extends ForwardingPartition {
    private final ShardQueries queries;

    ScatteredPartition(PartitionRef hosted, ShardQueries queries) {
        super(hosted);
        this.queries = queries;
    }

    @Override
    public Future<QueryResult> query(long[] localHashes) {
        return queries.query(inner, PromptHashes.LOCAL, localHashes);
    }

    @Override
    public Future<QueryResult> queryBySequenceHashes(long[] sequenceHashes) {
        return queries.query(inner, PromptHashes.SEQUENCE, sequenceHashes);
    }

    @Override
    public Future<QueryResult> queryByEngineHashes(long[] engineHashes) {
        return queries.query(inner, PromptHashes.ENGINE, engineHashes);
    }

    @Override
    public Future<TieredQueryResult> queryTiered(long[] localHashes) {
        return queries.queryTiered(inner, localHashes);
    }

    /**
     * The whole partition, every instance of the cluster, as one node holding all would snapshot it; an instance no
     * live node could give is named as missing.
     */
    @Override
    public Future<PartitionSnapshot> snapshot(PartitionSnapshot.Order order) {
        return queries.whole(inner).map(m -> m.snapshot(order));
    }

    @Override
    public String toString() {
        return "sharded " + inner;
    }
}
