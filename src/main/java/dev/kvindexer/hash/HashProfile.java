package dev.kvindexer.hash;

import java.nio.charset.StandardCharsets;

/**
 * How a vLLM engine hashes its blocks (docs/protocol/hashing.md#vllm-v1-block-hash, strategy {@code vllm_v1},
 * projection {@code low64_be}): the
 * encoding of each hashed value and the {@code PYTHONHASHSEED} text the chain starts from. Engines that share a
 * profile give the same tokens the same keys; a query must be hashed with its context's profile.
 */
public record HashProfile(Algorithm algorithm, String pythonHashSeed) {
    public static final String STRATEGY = "vllm_v1";
    public static final String INDEX_PROJECTION = "low64_be";

    /** vLLM's {@code --prefix-caching-hash-algo} values that can be reproduced. */
    public enum Algorithm {
        /** SHA-256 of canonical CBOR. */
        SHA256_CBOR("sha256_cbor"),
        /** SHA-256 of CPython pickle protocol 5, vLLM's default. */
        SHA256("sha256");

        private final String wireName;

        Algorithm(String wireName) {
            this.wireName = wireName;
        }

        public String wireName() {
            return wireName;
        }

        /** The algorithm of a wire name, or null for one that cannot be reproduced. */
        public static Algorithm of(String wireName) {
            for (Algorithm a : values()) {
                if (a.wireName.equals(wireName)) {
                    return a;
                }
            }
            return null;
        }
    }

    public HashProfile {
        String error = seedError(pythonHashSeed);
        if (error != null) {
            throw new IllegalArgumentException(error);
        }
    }

    /**
     * Why a {@code python_hash_seed} cannot be one, in the reference's words, or null for one that can: the literal
     * {@code random} or ASCII digits (leading zeros kept and significant) with a value up to 2^32 - 1.
     */
    public static String seedError(String seed) {
        if (seed.equals("random")) {
            return null;
        }
        if (seed.isEmpty() || !seed.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return "python_hash_seed must be \"random\" or ASCII decimal text in 0..4294967295";
        }
        String digits = seed.replaceFirst("^0+(?=.)", "");
        if (digits.length() > 10 || Long.parseLong(digits) > 0xFFFF_FFFFL) {
            return "python_hash_seed must be in range 0..4294967295";
        }
        return null;
    }

    /**
     * vLLM's {@code NONE_HASH}: the algorithm applied to the seed text as a Python {@code str}, the parent of the first
     * block.
     */
    public byte[] rootDigest() {
        return new VllmBlockHasher(this).root();
    }

    /** {@link #rootDigest()} in lowercase hex, as /services and /global_view show it. */
    public String rootDigestHex() {
        return java.util.HexFormat.of().formatHex(rootDigest());
    }

    byte[] seedUtf8() {
        return pythonHashSeed.getBytes(StandardCharsets.UTF_8);
    }
}
