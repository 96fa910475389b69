package dev.kvindexer.node;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.http.IndexDump;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.TieredQueryResult;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.selectservice.IndexAccess;
import io.vertx.core.Future;
import io.vertx.core.http.HttpServerResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** A node's index as the selection service uses it: its registrar, its partitions and its /dump. */
public final class EmbeddedIndex implements IndexAccess {
    private final IndexerNode node;
    private final ZmqIngest ingest;

    public EmbeddedIndex(IndexerNode node) {
        this.node = node;
        this.ingest = node.ingest();
    }

    @Override
    public Future<Void> registerAll(List<RegisterRequest> requests) {
        // A rank registered exactly so already (another replica's service in a cluster) is left as it is.
        List<RegisterRequest> missing = new ArrayList<>();
        try {
            for (RegisterRequest r : requests) {
                if (!node.registry().registeredAs(r)) {
                    node.registry().checkRegister(r);
                    missing.add(r);
                }
            }
        } catch (Refusal refused) {
            return Future.failedFuture(refused);
        }
        int free = ingest.listenerCapacity() - ingest.listenerCount();
        if (missing.size() > free) {
            return Future.failedFuture(Refusal.full("listener limit "
                    + "reached: " + missing.size() + " ranks need a listener each and " + Math.max(free, 0) + " of "
                    + ingest.listenerCapacity() + " are free (--max-listeners)"));
        }
        List<Future<Void>> registered = new ArrayList<>();
        for (RegisterRequest r : missing) {
            registered.add(node.registrar()
                    .register(r)
                    .recover(t -> node.registry().registeredAs(r) ? Future.succeededFuture() : Future.failedFuture(t)));
        }
        return Future.join(registered).transform(ar -> {
            if (ar.succeeded() || missing.isEmpty()) {
                return Future.succeededFuture();
            }
            // Only what this call registered goes: ranks registered before it stay.
            List<Future<Void>> undone = new ArrayList<>();
            for (int i = 0; i < missing.size(); i++) {
                RegisterRequest r = missing.get(i);
                if (registered.get(i).succeeded()) {
                    undone.add(node.registrar()
                            .unregister(
                                    r.workerId(),
                                    r.partition().modelName(),
                                    r.partition().routingGroup(),
                                    r.dpRank())
                            .otherwiseEmpty());
                }
            }
            return Future.join(undone).transform(v -> Future.failedFuture(ar.cause()));
        });
    }

    @Override
    public Future<Void> unregister(long workerId, PartitionKey partition) {
        return node.registrar().unregister(workerId, partition.modelName(), partition.routingGroup(), null);
    }

    @Override
    public Future<Void> unregisterRank(long workerId, PartitionKey partition, int dpRank) {
        return node.registrar().unregister(workerId, partition.modelName(), partition.routingGroup(), dpRank);
    }

    @Override
    public boolean registeredAs(RegisterRequest r) {
        return node.registry().registeredAs(r);
    }

    @Override
    public Future<Void> ensurePartition(PartitionKey partition, int blockSize) {
        return node.registrations().ensurePartition(partition, blockSize).mapEmpty();
    }

    @Override
    public Future<TieredQueryResult> queryTiered(PartitionKey partition, long[] localHashes) {
        return node.queries().matchForSelection(partition, localHashes);
    }

    @Override
    public Future<long[]> engineHashes(
            PartitionKey partition, long workerId, int dpRank, long[] localHashes, int maxBlocks) {
        return node.queries().engineChain(partition, workerId, dpRank, localHashes, maxBlocks);
    }

    @Override
    public Future<Void> apply(PartitionKey partition, List<StandardEvent> events) {
        Optional<PartitionRef> p = node.registry().partition(partition);
        return p.isEmpty()
                ? Future.succeededFuture()
                : p.get().applyStandard(events).mapEmpty();
    }

    @Override
    public Future<Void> dump(HttpServerResponse response) {
        return IndexDump.serve(node.registry(), response, false, node.dumps());
    }
}
