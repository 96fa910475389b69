package dev.kvindexer.registry;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.Publisher;
import java.util.Objects;

/** A validated registration of one ZMQ publisher (instance, dp_rank) into a partition. */
public record RegisterRequest(
        long workerId,
        int dpRank,
        String endpoint,
        String replayEndpoint,
        PartitionKey partition,
        int blockSize,
        Publisher publisher) {
    /** A Dynamo registration: numeric id, no publisher details. */
    public RegisterRequest(
            long workerId, int dpRank, String endpoint, String replayEndpoint, PartitionKey partition, int blockSize) {
        this(workerId, dpRank, endpoint, replayEndpoint, partition, blockSize, Publisher.DYNAMO);
    }

    /** The registration a listener was started for. */
    public static RegisterRequest of(Listener l) {
        return new RegisterRequest(
                l.workerId(),
                l.dpRank(),
                l.endpoint(),
                l.replayEndpoint(),
                l.partitionKey(),
                l.blockSize(),
                l.publisher());
    }

    /** True when {@code l} is this very registration (so registering again changes nothing). */
    public boolean sameAs(Listener l) {
        return l.workerId() == workerId
                && l.dpRank() == dpRank
                && l.endpoint().equals(endpoint)
                && Objects.equals(l.replayEndpoint(), replayEndpoint)
                && l.partitionKey().equals(partition)
                && l.blockSize() == blockSize
                && l.publisher().equals(publisher);
    }
}
