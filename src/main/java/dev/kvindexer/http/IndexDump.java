package dev.kvindexer.http;

import dev.kvindexer.dump.DumpWriter;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;

/** The whole index as {@code GET /dump} answers it in JSON (SPEC §7.9): every partition, a failed one as its error. */
public final class IndexDump {
    private IndexDump() {
    }

    public static Future<String> json(Registry registry) {
        List<PartitionRef> partitions = registry.partitions();
        List<Future<String>> parts = new ArrayList<>();
        for (PartitionRef p : partitions) {
            parts.add(p.dump().otherwise(t -> DumpWriter.failedPartition(t.getMessage())));
        }
        return Future.join(parts).transform(ar -> Future.succeededFuture(DumpWriter.document(
                partitions.stream().map(PartitionRef::key).toList(), parts.stream().map(Future::result).toList())));
    }
}
