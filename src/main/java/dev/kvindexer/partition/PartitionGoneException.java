package dev.kvindexer.partition;

import dev.kvindexer.event.PartitionKey;

/** The partition was removed (its last worker left) between looking its handle up and asking it. */
public final class PartitionGoneException extends RuntimeException {
    public PartitionGoneException(PartitionKey key) {
        super("partition " + key.dumpKey() + " is gone", null, false, false);
    }
}
