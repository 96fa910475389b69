package dev.kvindexer.event;

/**
 * The index operations every wire format is converted into: the project's one vocabulary for
 * events, like Dynamo's {@code protocols.rs}. Hashes are unsigned 64-bit values held in longs.
 * Arrays are owned by the event once constructed and never mutated.
 */
public sealed interface KvEvent permits KvEvent.Stored, KvEvent.Removed, KvEvent.Cleared {

    /**
     * Blocks stored in a chain under {@code parentHash} (engine hash; ignored when {@code !hasParent}).
     * {@code tokensHashes[i]} is the local hash the indexer computed for {@code blockHashes[i]}.
     */
    record Stored(StorageTier tier, boolean hasParent, long parentHash, long[] blockHashes, long[] tokensHashes)
            implements KvEvent {
        public Stored {
            if (blockHashes.length != tokensHashes.length) {
                throw new IllegalArgumentException("blockHashes and tokensHashes differ in length");
            }
        }

        public int size() {
            return blockHashes.length;
        }
    }

    /** Engine hashes removed from one tier. */
    record Removed(StorageTier tier, long[] blockHashes) implements KvEvent {
    }

    /** The emitting (worker, dp_rank) dropped everything, in every tier. */
    record Cleared() implements KvEvent {
        public static final Cleared INSTANCE = new Cleared();
    }
}
