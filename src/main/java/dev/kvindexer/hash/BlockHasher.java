package dev.kvindexer.hash;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import net.openhft.hashing.LongHashFunction;

/** XXH3-64 block hashing compatible with Dynamo and the Mooncake standard (docs/protocol/hashing.md). */
public final class BlockHasher {
    /** XXH3_SEED / CHAIN_XXH3_SEED. */
    public static final long BASE_SEED = 1337L;

    private static final LongHashFunction BASE = LongHashFunction.xx3(BASE_SEED);
    private static final LongHashFunction LORA_FN = LongHashFunction.xx3(0L);
    private static final LongHashFunction SALT_FN = LongHashFunction.xx3(1L);

    /*
     * zero-allocation-hashing hashes int[]/long[] in native byte order; the block hash wants little-endian
     * bytes. On little-endian hosts (all supported ones) that means hashing the arrays in place;
     * big-endian hosts take a byte-swapping copy.
     */
    private static final boolean NATIVE_LE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    /** Seeded instances derive a secret on creation: keep the last one per thread (one tenant at a time). */
    private static final ThreadLocal<SeededFunction> LAST_SEEDED = new ThreadLocal<>();

    private static final ThreadLocal<long[]> PAIR = ThreadLocal.withInitial(() -> new long[2]);

    private BlockHasher() {}

    /**
     * The seed (docs/protocol/hashing.md#seed-derivation): 1337 + XXH3(lora, 0) + XXH3(salt, 1), wrapping; null and ""
     * mean absent.
     */
    public static long seedFor(String loraName, String cacheSalt) {
        long seed = BASE_SEED;
        if (loraName != null && !loraName.isEmpty()) {
            seed += LORA_FN.hashBytes(loraName.getBytes(StandardCharsets.UTF_8));
        }
        if (cacheSalt != null && !cacheSalt.isEmpty()) {
            seed += SALT_FN.hashBytes(cacheSalt.getBytes(StandardCharsets.UTF_8));
        }
        return seed;
    }

    /** XXH3-64 of raw bytes with a seed. */
    public static long hashBytes(byte[] bytes, long seed) {
        return function(seed).hashBytes(bytes);
    }

    /** Local hash of {@code count} tokens starting at {@code from}, each as u32 little-endian. */
    public static long hashTokens(int[] tokens, int from, int count, long seed) {
        return hashTokens(function(seed), tokens, from, count);
    }

    /**
     * Local hashes (docs/protocol/hashing.md#local-block-hash): one local hash per complete block; the partial trailing
     * block is dropped.
     */
    public static long[] localHashes(int[] tokens, int blockSize, long seed) {
        return localHashes(tokens, tokens.length, blockSize, seed);
    }

    /** As {@link #localHashes(int[], int, long)} over the first {@code length} tokens of a reused buffer. */
    public static long[] localHashes(int[] tokens, int length, int blockSize, long seed) {
        if (blockSize <= 0 || length < blockSize) {
            return new long[0];
        }
        LongHashFunction fn = function(seed);
        long[] out = new long[length / blockSize];
        for (int i = 0; i < out.length; i++) {
            out[i] = hashTokens(fn, tokens, i * blockSize, blockSize);
        }
        return out;
    }

    /**
     * Eagle mode (docs/protocol/hashing.md#event-side-variants): block {@code block} is hashed over {@code
     * tokens[block*bs .. (block+1)*bs]}
     * inclusive ({@code bs + 1} tokens); the caller guarantees those tokens exist.
     */
    public static long eagleWindowHash(int[] tokens, int block, int blockSize, long seed) {
        return hashTokens(tokens, block * blockSize, blockSize + 1, seed);
    }

    /**
     * Multimodal (docs/protocol/hashing.md#event-side-variants): the block's token bytes followed by its mm hashes
     * sorted ascending
     * (unsigned), each u64 little-endian. {@code mmHashes} is not modified. An empty array gives the
     * plain token hash.
     */
    public static long hashTokensWithMm(int[] tokens, int from, int count, long[] mmHashes, long seed) {
        if (mmHashes == null || mmHashes.length == 0) {
            return hashTokens(tokens, from, count, seed);
        }
        long[] sorted = mmHashes.clone();
        sortUnsigned(sorted);
        ByteBuffer buf = ByteBuffer.allocate(count * Integer.BYTES + sorted.length * Long.BYTES)
                .order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++) {
            buf.putInt(tokens[from + i]);
        }
        for (long mm : sorted) {
            buf.putLong(mm);
        }
        return function(seed).hashBytes(buf.array());
    }

    /**
     * One step of the rolling sequence hash (docs/protocol/hashing.md#rolling-sequence-hash): XXH3(le64(prev) ++
     * le64(local), 1337).
     */
    public static long chain(long previousSequenceHash, long localHash) {
        return chain(PAIR.get(), previousSequenceHash, localHash);
    }

    /** Rolling sequence hashes (docs/protocol/hashing.md#rolling-sequence-hash) of a list of local hashes. */
    public static long[] sequenceHashes(long[] localHashes) {
        long[] out = new long[localHashes.length];
        if (out.length == 0) {
            return out;
        }
        long[] pair = PAIR.get();
        out[0] = localHashes[0];
        for (int i = 1; i < out.length; i++) {
            out[i] = chain(pair, out[i - 1], localHashes[i]);
        }
        return out;
    }

    private static long chain(long[] pair, long prev, long local) {
        if (NATIVE_LE) {
            pair[0] = prev;
            pair[1] = local;
        } else {
            pair[0] = Long.reverseBytes(prev);
            pair[1] = Long.reverseBytes(local);
        }
        return BASE.hashLongs(pair, 0, 2);
    }

    static long hashTokens(LongHashFunction fn, int[] tokens, int from, int count) {
        if (NATIVE_LE) {
            return fn.hashInts(tokens, from, count);
        }
        int[] swapped = new int[count];
        for (int i = 0; i < count; i++) {
            swapped[i] = Integer.reverseBytes(tokens[from + i]);
        }
        return fn.hashInts(swapped);
    }

    static LongHashFunction function(long seed) {
        if (seed == BASE_SEED) {
            return BASE;
        }
        SeededFunction last = LAST_SEEDED.get();
        if (last == null || last.seed != seed) {
            last = new SeededFunction(seed, LongHashFunction.xx3(seed));
            LAST_SEEDED.set(last);
        }
        return last.fn;
    }

    /** Unsigned ascending sort: flipping the sign bit maps unsigned order onto signed order. */
    private static void sortUnsigned(long[] a) {
        for (int i = 0; i < a.length; i++) {
            a[i] ^= Long.MIN_VALUE;
        }
        Arrays.sort(a);
        for (int i = 0; i < a.length; i++) {
            a[i] ^= Long.MIN_VALUE;
        }
    }

    private record SeededFunction(long seed, LongHashFunction fn) {}
}
