package dev.kvindexer.node;

import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PartitionStats;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;

/** Every partition's size figures, asked through their handles at once, for /metrics and /overview. */
record PartitionFigures(PartitionRef partition, PartitionStats stats) {
    /** A partition that is going away as it is asked is left out rather than failing the whole answer. */
    static Future<List<PartitionFigures>> collect(List<PartitionRef> partitions) {
        List<Future<PartitionStats>> asked = new ArrayList<>();
        partitions.forEach(p -> asked.add(p.stats()));
        return Future.join(asked).transform(ignored -> {
            List<PartitionFigures> found = new ArrayList<>();
            for (int i = 0; i < partitions.size(); i++) {
                if (asked.get(i).succeeded()) {
                    found.add(
                            new PartitionFigures(partitions.get(i), asked.get(i).result()));
                }
            }
            return Future.succeededFuture(found);
        });
    }
}
