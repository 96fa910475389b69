package dev.kvindexer.event;

/**
 * The index operations every wire format is converted into: the project's one vocabulary for
 * events, like Dynamo's {@code protocols.rs}. Hashes are unsigned 64-bit values held in longs.
 * Arrays are owned by the event once constructed and never mutated.
 */
public sealed interface KvEvent permits KvEvent.Stored, KvEvent.StoredBySequence, KvEvent.Removed, KvEvent.Cleared {

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

    /**
     * Blocks stored without their tokens (a standardized {@code stored} event with no {@code token_ids},
     * docs/protocol/events.md#standardized-events-into-index-operations):
     * only their rolling sequence hashes (docs/protocol/hashing.md#rolling-sequence-hash) are known, which are also
     * their engine hashes, so they are placed
     * by sequence hash. {@code parentHash} is the sequence hash of the block before the first (ignored when
     * {@code !hasParent}).
     */
    record StoredBySequence(StorageTier tier, boolean hasParent, long parentHash, long[] sequenceHashes)
            implements KvEvent {}

    /** Engine hashes removed from one tier. */
    record Removed(StorageTier tier, long[] blockHashes) implements KvEvent {}

    /** The emitting (worker, dp_rank) dropped everything, in every tier. */
    record Cleared() implements KvEvent {
        public static final Cleared INSTANCE = new Cleared();
    }
}
