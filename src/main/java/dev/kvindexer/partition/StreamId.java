package dev.kvindexer.partition;

import dev.kvindexer.event.PartitionKey;

/** One engine stream as registered: (partition, instance, registered dp_rank). */
public record StreamId(PartitionKey partition, long workerId, int dpRank) {
    @Override
    public String toString() {
        return "model=" + partition.modelName() + " tenant=" + partition.routingGroup() + " instance="
                + Long.toUnsignedString(workerId) + " dp_rank=" + dpRank;
    }
}
