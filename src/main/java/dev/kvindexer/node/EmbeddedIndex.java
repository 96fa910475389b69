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
import dev.kvindexer.registry.RegistryException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** A node's index as the selection service uses it: its registrar, its partitions and its /dump. */
public final class EmbeddedIndex implements IndexAccess {
    private final NodeServices node;

    public EmbeddedIndex(IndexerNode node) {
        this.node = node.services();
    }

    @Override
    public Future<Void> registerAll(List<RegisterRequest> requests) {
        try {
            for (RegisterRequest r : requests) {
                node.registry().checkRegister(r);
            }
        } catch (RegistryException refused) {
            return Future.failedFuture(refused);
        }
        List<Future<Void>> registered = new ArrayList<>();
        for (RegisterRequest r : requests) {
            registered.add(node.registrar().register(r));
        }
        return Future.join(registered).transform(ar -> {
            if (ar.succeeded() || requests.isEmpty()) {
                return Future.succeededFuture();
            }
            RegisterRequest first = requests.get(0);
            return unregister(first.workerId(), first.partition()).otherwiseEmpty()
                    .compose(v -> Future.failedFuture(ar.cause()));
        });
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
