package dev.kvindexer.registry;

import dev.kvindexer.partition.Addresses;
import dev.kvindexer.partition.PartitionKey;
import io.vertx.core.Future;
import io.vertx.core.Promise;

/** A partition as the registry knows it: fixed block size, its actor's address, and when that actor is ready. */
public final class PartitionEntry {
    private final PartitionKey key;
    private final int blockSize;
    private final long incarnation;
    private final Promise<String> deployed = Promise.promise();

    PartitionEntry(PartitionKey key, int blockSize, long incarnation) {
        this.key = key;
        this.blockSize = blockSize;
        this.incarnation = incarnation;
    }

    public PartitionKey key() {
        return key;
    }

    public int blockSize() {
        return blockSize;
    }

    public String address() {
        return Addresses.partition(incarnation);
    }

    public long incarnation() {
        return incarnation;
    }

    /** Completes with the deployment id once the partition actor consumes its address. */
    public Future<String> deployed() {
        return deployed.future();
    }

    Promise<String> deployedPromise() {
        return deployed;
    }
}
