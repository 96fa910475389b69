package dev.kvindexer.node;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.http.IndexDump;
import dev.kvindexer.http.NodeServices;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.TieredQueryResult;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.selectservice.IndexAccess;
import io.vertx.core.Future;
import io.vertx.core.http.HttpServerResponse;
import java.util.List;
import java.util.Optional;

/** A node's index as the selection service uses it: its registrar, its partitions and its /dump. */
public final class EmbeddedIndex implements IndexAccess {
    private final NodeServices node;

    public EmbeddedIndex(IndexerNode node) {
        this.node = node.services();
    }

    @Override
    public Future<Void> register(RegisterRequest request) {
        return node.registrar().register(request);
    }

    @Override
    public Future<Void> unregister(long workerId, PartitionKey partition) {
        return node.registrar().unregister(workerId, partition.modelName(), partition.tenantId(), null);
    }

    @Override
    public Future<Void> ensurePartition(PartitionKey partition, int blockSize) {
        return node.registrations().ensurePartition(partition, blockSize).mapEmpty();
    }

    @Override
    public Future<TieredQueryResult> queryTiered(PartitionKey partition, long[] localHashes) {
        Optional<PartitionRef> p = node.registry().partition(partition);
        return p.isEmpty() ? Future.succeededFuture(null) : p.get().queryTiered(localHashes);
    }

    @Override
    public Future<Void> apply(PartitionKey partition, List<StandardEvent> events) {
        Optional<PartitionRef> p = node.registry().partition(partition);
        return p.isEmpty() ? Future.succeededFuture() : p.get().applyStandard(events).mapEmpty();
    }

    @Override
    public Future<Void> dump(HttpServerResponse response) {
        return IndexDump.serve(node.registry(), response, false);
    }
}
