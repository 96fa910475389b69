package dev.kvindexer.hash;

import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * vLLM's v1 block hash (docs/protocol/hashing.md#vllm-v1-block-hash): each complete block's digest is SHA-256 of {@code
 * (parent digest, tokens,
 * extras)} in the profile's encoding, the parent of block 0 being the profile's root; the key an engine publishes is
 * the digest's last 8 bytes, big-endian. Extras are the LoRA name on every block and the cache salt on block 0 only.
 * One instance per thread: it keeps its digest and encoding buffers.
 */
public final class VllmBlockHasher {
    private static final int CBOR_UNSIGNED = 0;
    private static final int CBOR_NEGATIVE = 1;
    private static final int CBOR_BYTES = 2;
    private static final int CBOR_TEXT = 3;
    private static final int CBOR_ARRAY = 4;
    private static final byte CBOR_NULL = (byte) 0xf6;
    private static final int DIGEST_BYTES = 32;

    private final HashProfile profile;
    private final MessageDigest sha256;
    private final PickleProtocol5 pickle = new PickleProtocol5();
    private final byte[] root;
    private byte[] blockBytes = new byte[256];

    public VllmBlockHasher(HashProfile profile) {
        this.profile = profile;
        try {
            this.sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
        this.root = sha256.digest(encodeSeed(profile.seedUtf8()));
    }

    /** The profile's root digest ({@code NONE_HASH}). */
    byte[] root() {
        return root.clone();
    }

    /** The key an engine publishes for a digest: its last 8 bytes, big-endian. */
    public static long key(byte[] digest) {
        long k = 0;
        for (int i = digest.length - 8; i < digest.length; i++) {
            k = (k << 8) | (digest[i] & 0xffL);
        }
        return k;
    }

    /**
     * The chain of a prompt's complete blocks (a partial tail is never hashed), computed one block at a time so a
     * caller that stops early hashes no more. {@code loraName} and {@code cacheSalt}: null or empty for none.
     */
    public Chain chain(int[] tokens, int blockSize, String loraName, String cacheSalt) {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be positive");
        }
        return new Chain(tokens, blockSize, utf8(loraName), utf8(cacheSalt));
    }

    /** One prompt's blocks, hashed in order on demand. */
    public final class Chain {
        private final int[] tokens;
        private final int blockSize;
        private final byte[][] everyBlock;
        private final byte[][] firstBlock;
        /** The last block's digest, overwritten by the next: its bytes are copied into the next block's encoding. */
        private final byte[] digest = new byte[DIGEST_BYTES];

        private byte[] parent = root;
        private int next;

        private Chain(int[] tokens, int blockSize, byte[] lora, byte[] salt) {
            this.tokens = tokens;
            this.blockSize = blockSize;
            this.everyBlock = lora == null ? new byte[0][] : new byte[][] {lora};
            this.firstBlock =
                    salt == null ? everyBlock : lora == null ? new byte[][] {salt} : new byte[][] {lora, salt};
        }

        /** Complete blocks in the prompt. */
        public int blocks() {
            return tokens.length / blockSize;
        }

        /** Blocks hashed so far. */
        public int hashed() {
            return next;
        }

        /** The full digest of the next block; {@code hashed() < blocks()}. */
        public byte[] nextDigest() {
            hashNext();
            return digest.clone();
        }

        /** The key of the next block; {@code hashed() < blocks()}. */
        public long nextKey() {
            hashNext();
            return key(digest);
        }

        private void hashNext() {
            if (next >= blocks()) {
                throw new IllegalStateException("no block " + next + " in " + blocks());
            }
            byte[][] extras = next == 0 ? firstBlock : everyBlock;
            if (profile.algorithm() == HashProfile.Algorithm.SHA256) {
                sha256.update(pickle.block(parent, tokens, next * blockSize, blockSize, extras));
            } else {
                sha256.update(blockBytes, 0, cborBlock(parent, tokens, next * blockSize, blockSize, extras));
            }
            try {
                sha256.digest(digest, 0, DIGEST_BYTES);
            } catch (DigestException e) {
                throw new IllegalStateException("a SHA-256 digest is 32 bytes", e);
            }
            parent = digest;
            next++;
        }
    }

    /** The exact bytes hashed for one block (tests compare them with the reference's). */
    byte[] encodeBlock(byte[] parent, int[] tokens, int from, int n, byte[][] extras) {
        if (profile.algorithm() == HashProfile.Algorithm.SHA256) {
            return pickle.block(parent, tokens, from, n, extras);
        }
        int length = cborBlock(parent, tokens, from, n, extras);
        return Arrays.copyOf(blockBytes, length);
    }

    /**
     * Writes the block's CBOR into {@code blockBytes}, answering its length: {@code [parent bytes, [tokens...], null
     * or [extras...]]}, every head definite and as short as it can be, as vLLM's cbor2 writes it. By hand: a general
     * CBOR writer costs more a block than the SHA-256 of its bytes.
     */
    private int cborBlock(byte[] parent, int[] tokens, int from, int n, byte[][] extras) {
        int size = 1 + 9 + parent.length + 9 + 5 * n + 9;
        for (byte[] e : extras) {
            size += 9 + e.length;
        }
        byte[] b = blockBytes.length >= size ? blockBytes : (blockBytes = new byte[size]);
        int p = 0;
        b[p++] = (byte) 0x83;
        p = cborHead(b, p, CBOR_BYTES, parent.length);
        System.arraycopy(parent, 0, b, p, parent.length);
        p += parent.length;
        p = cborHead(b, p, CBOR_ARRAY, n);
        for (int i = from; i < from + n; i++) {
            p = cborToken(b, p, tokens[i]);
        }
        if (extras.length == 0) {
            b[p++] = CBOR_NULL;
        } else {
            p = cborHead(b, p, CBOR_ARRAY, extras.length);
            for (byte[] e : extras) {
                p = cborHead(b, p, CBOR_TEXT, e.length);
                System.arraycopy(e, 0, b, p, e.length);
                p += e.length;
            }
        }
        return p;
    }

    /** A token id as CBOR: {@link #cborHead} unrolled for the ids of a vocabulary, the bytes of nearly every block. */
    private static int cborToken(byte[] b, int p, int t) {
        if (t < 0) {
            return cborHead(b, p, CBOR_NEGATIVE, -1L - t);
        }
        if (t < 24) {
            b[p] = (byte) t;
            return p + 1;
        }
        if (t < 0x100) {
            b[p] = 24;
            b[p + 1] = (byte) t;
            return p + 2;
        }
        if (t < 0x1_0000) {
            b[p] = 25;
            b[p + 1] = (byte) (t >>> 8);
            b[p + 2] = (byte) t;
            return p + 3;
        }
        b[p] = 26;
        b[p + 1] = (byte) (t >>> 24);
        b[p + 2] = (byte) (t >>> 16);
        b[p + 3] = (byte) (t >>> 8);
        b[p + 4] = (byte) t;
        return p + 5;
    }

    /** A CBOR head: the major type and {@code value} (unsigned) in the fewest bytes. */
    private static int cborHead(byte[] b, int p, int major, long value) {
        int m = major << 5;
        if (value < 24) {
            b[p++] = (byte) (m | value);
            return p;
        }
        int bytes = value < 0x100 ? 1 : value < 0x1_0000 ? 2 : value < 0x1_0000_0000L ? 4 : 8;
        b[p++] = (byte) (m | (24 + Integer.numberOfTrailingZeros(bytes)));
        for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) {
            b[p++] = (byte) (value >>> shift);
        }
        return p;
    }

    private byte[] encodeSeed(byte[] seed) {
        if (profile.algorithm() == HashProfile.Algorithm.SHA256) {
            return pickle.string(seed);
        }
        byte[] text = new byte[9 + seed.length];
        int p = cborHead(text, 0, CBOR_TEXT, seed.length);
        System.arraycopy(seed, 0, text, p, seed.length);
        return Arrays.copyOf(text, p + seed.length);
    }

    private static byte[] utf8(String s) {
        return s == null || s.isEmpty() ? null : s.getBytes(StandardCharsets.UTF_8);
    }
}
