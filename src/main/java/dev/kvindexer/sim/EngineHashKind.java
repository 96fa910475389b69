package dev.kvindexer.sim;

import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.hash.HashProfile;
import dev.kvindexer.hash.VllmBlockHasher;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * How an engine derives its own block hashes from a prompt (docs/protocol/hashing.md#the-three-kinds-of-block-hash:
 * engine hashes are opaque to the indexer).
 */
public enum EngineHashKind {
    /**
     * Dynamo mocker style: the rolling sequence hash of the local hashes
     * (docs/protocol/hashing.md#rolling-sequence-hash); equal across engines.
     */
    SEQUENCE,
    /**
     * vLLM style: low 64 bits of SHA-256(parent hash ‖ block tokens), rooted at a per-process random value (vLLM's
     * NONE_HASH without PYTHONHASHSEED), so two engines, or one engine before and after a restart, hash the same
     * prefix differently. Here the root comes from {@code engineSeed}, so it is deterministic.
     */
    RANDOM,
    /**
     * vLLM's {@code sha256_cbor} block hash with {@code PYTHONHASHSEED=0}, as the C++ Mooncake Conductor recomputes it
     * from a registration's hash profile ({@link #CONDUCTOR_PROFILE}), its low 64 bits: equal across engines, so an
     * engine of this kind can be registered with the Conductor's API and queried through it.
     */
    SHA256_CBOR,
    /**
     * SGLang's page hash, as its engine publishes it and its router asks with it (docs/api/sglang-grpc.md): block k
     * is SHA-256 of block k-1's whole digest followed by its tokens as u32 little-endian, and its hash the digest's
     * first 8 bytes, big-endian; equal across engines.
     */
    SGLANG;

    /** The hash profile {@link #SHA256_CBOR} engines hash by, and register with. */
    public static final HashProfile CONDUCTOR_PROFILE = new HashProfile(HashProfile.Algorithm.SHA256_CBOR, "0");

    /** Parses the CLI spelling ({@code sequence}, {@code random}, {@code sha256-cbor}). */
    public static EngineHashKind parse(String s) {
        return valueOf(s.trim().replace('-', '_').toUpperCase(java.util.Locale.ROOT));
    }

    /** Cuts {@code prompt} into complete blocks (the partial tail is dropped) and hashes them. */
    public BlockChain chain(int[] prompt, int blockSize, long engineSeed) {
        long[] local = BlockHasher.localHashes(prompt, blockSize, BlockHasher.BASE_SEED);
        int[] tokens = Arrays.copyOf(prompt, local.length * blockSize);
        long[] engine = switch (this) {
            case SEQUENCE -> BlockHasher.sequenceHashes(local);
            case RANDOM -> shaChain(tokens, blockSize, engineSeed);
            case SHA256_CBOR -> conductorChain(tokens, blockSize, local.length);
            case SGLANG -> sglangChain(tokens, blockSize);
        };
        return new BlockChain(blockSize, tokens, local, engine);
    }

    private static long[] conductorChain(int[] tokens, int blockSize, int blocks) {
        VllmBlockHasher.Chain chain = new VllmBlockHasher(CONDUCTOR_PROFILE).chain(tokens, blockSize, null, null);
        long[] out = new long[blocks];
        for (int b = 0; b < blocks; b++) {
            out[b] = chain.nextKey();
        }
        return out;
    }

    private static long[] shaChain(int[] tokens, int blockSize, long rootSeed) {
        MessageDigest sha = sha256();
        int blocks = tokens.length / blockSize;
        long[] out = new long[blocks];
        byte[] buf = new byte[Long.BYTES + blockSize * Integer.BYTES];
        long parent = rootSeed;
        for (int b = 0; b < blocks; b++) {
            putLe(buf, 0, parent, Long.BYTES);
            for (int i = 0; i < blockSize; i++) {
                putLe(buf, Long.BYTES + i * Integer.BYTES, tokens[b * blockSize + i], Integer.BYTES);
            }
            byte[] digest = sha.digest(buf);
            // vLLM's int conversion: int.from_bytes(digest, "big") masked to 64 bits = the last 8 bytes, big-endian.
            long h = 0;
            for (int i = digest.length - Long.BYTES; i < digest.length; i++) {
                h = (h << 8) | (digest[i] & 0xffL);
            }
            out[b] = h;
            parent = h;
        }
        return out;
    }

    /** SGLang's chain over {@code tokens}' complete blocks. */
    public static long[] sglangChain(int[] tokens, int blockSize) {
        MessageDigest sha = sha256();
        int blocks = tokens.length / blockSize;
        long[] out = new long[blocks];
        byte[] page = new byte[blockSize * Integer.BYTES];
        byte[] previous = null;
        for (int b = 0; b < blocks; b++) {
            if (previous != null) {
                sha.update(previous);
            }
            for (int i = 0; i < blockSize; i++) {
                putLe(page, i * Integer.BYTES, tokens[b * blockSize + i], Integer.BYTES);
            }
            previous = sha.digest(page);
            long h = 0;
            for (int i = 0; i < Long.BYTES; i++) {
                h = (h << 8) | (previous[i] & 0xffL);
            }
            out[b] = h;
        }
        return out;
    }

    private static void putLe(byte[] buf, int at, long v, int width) {
        for (int i = 0; i < width; i++) {
            buf[at + i] = (byte) (v >>> (8 * i));
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is mandatory in every JRE", e);
        }
    }
}
