package dev.kvindexer.hash;

/** XXH3-64 block hashing compatible with Dynamo and the Mooncake standard (SPEC §2). */
public final class BlockHasher {
    /** XXH3_SEED / CHAIN_XXH3_SEED. */
    public static final long BASE_SEED = 1337L;

    private BlockHasher() {
    }

    /** SPEC §2.4: 1337 + XXH3(lora, 0) + XXH3(salt, 1), wrapping; null and "" mean absent. */
    public static long seedFor(String loraName, String cacheSalt) {
        throw new UnsupportedOperationException("TODO");
    }

    /** XXH3-64 of raw bytes with a seed. */
    public static long hashBytes(byte[] bytes, long seed) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Local hash of {@code count} tokens starting at {@code from}, each as u32 little-endian. */
    public static long hashTokens(int[] tokens, int from, int count, long seed) {
        throw new UnsupportedOperationException("TODO");
    }

    /** SPEC §2.5: one local hash per complete block; the partial trailing block is dropped. */
    public static long[] localHashes(int[] tokens, int blockSize, long seed) {
        throw new UnsupportedOperationException("TODO");
    }

    /** SPEC §2.6 step: XXH3(le64(prev) ++ le64(local), 1337). */
    public static long chain(long previousSequenceHash, long localHash) {
        throw new UnsupportedOperationException("TODO");
    }

    /** SPEC §2.6: rolling sequence hashes of a list of local hashes. */
    public static long[] sequenceHashes(long[] localHashes) {
        throw new UnsupportedOperationException("TODO");
    }
}
