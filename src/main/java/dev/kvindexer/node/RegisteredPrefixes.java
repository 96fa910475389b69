package dev.kvindexer.node;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.grpc.RegisteredEngines;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PromptHashes;
import dev.kvindexer.query.IndexQueries;
import dev.kvindexer.registry.InstanceIds;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The registered engines of one partition as SGLang's {@code MatchExternalKvPrefix} asks them: the same query
 * {@code /query} makes (scattered over the shards in a sharded cluster), by engine hashes, each instance's reach through
 * device and host memory (HBM and DRAM in SGLang's words) at its best rank.
 */
final class RegisteredPrefixes implements RegisteredEngines {
    private final IndexQueries queries;
    private final Registry registry;
    private final PartitionKey key;

    RegisteredPrefixes(IndexQueries queries, Registry registry, PartitionKey key) {
        this.queries = queries;
        this.registry = registry;
        this.key = key;
    }

    @Override
    public Future<List<Holder>> prefixes(long[] engineHashes) {
        PartitionRef partition = queries.partition(key).orElse(null);
        if (partition == null) {
            return Future.succeededFuture(List.of());
        }
        Map<Long, Registry.WorkerView> named = new HashMap<>();
        for (Registry.WorkerView w : registry.workers(key.modelName(), key.routingGroup())) {
            if (w.workerAddress() != null) {
                named.put(w.workerId(), w);
            }
        }
        if (named.isEmpty()) {
            return Future.succeededFuture(List.of());
        }
        long tokens = (long) engineHashes.length * partition.blockSize();
        return queries.hostReach(partition, engineHashes, PromptHashes.ENGINE, tokens)
                .map(best -> holders(best, named));
    }

    private static List<Holder> holders(Map<Long, Integer> best, Map<Long, Registry.WorkerView> named) {
        List<Holder> out = new ArrayList<>(best.size());
        best.forEach((id, blocks) -> {
            Registry.WorkerView w = named.get(id);
            if (w != null && blocks > 0) {
                out.add(new Holder(InstanceIds.display(id, w.name()), w.workerAddress(), blocks));
            }
        });
        return out;
    }
}
