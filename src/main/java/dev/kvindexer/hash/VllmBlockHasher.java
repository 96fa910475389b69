package dev.kvindexer.hash;

import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import com.fasterxml.jackson.dataformat.cbor.CBORGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * vLLM's v1 block hash (docs/protocol/hashing.md#vllm-v1-block-hash): each complete block's digest is SHA-256 of {@code
 * (parent digest, tokens,
 * extras)} in the profile's encoding, the parent of block 0 being the profile's root; the key an engine publishes is
 * the digest's last 8 bytes, big-endian. Extras are the LoRA name on every block and the cache salt on block 0 only.
 * One instance per thread: it keeps its digest and encoding buffers.
 */
public final class VllmBlockHasher {
    private static final CBORFactory CBOR = new CBORFactory();

    private final HashProfile profile;
    private final MessageDigest sha256;
    private final PickleProtocol5 pickle = new PickleProtocol5();
    private final ByteArrayOutputStream cborBytes = new ByteArrayOutputStream(256);
    private final CBORGenerator cbor;
    private final byte[] root;

    public VllmBlockHasher(HashProfile profile) {
        this.profile = profile;
        try {
            this.sha256 = MessageDigest.getInstance("SHA-256");
            this.cbor = CBOR.createGenerator(cborBytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
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
            if (next >= blocks()) {
                throw new IllegalStateException("no block " + next + " in " + blocks());
            }
            byte[][] extras = next == 0 ? firstBlock : everyBlock;
            parent = sha256.digest(encodeBlock(parent, tokens, next * blockSize, blockSize, extras));
            next++;
            return parent;
        }

        /** The key of the next block. */
        public long nextKey() {
            return key(nextDigest());
        }
    }

    /** The exact bytes hashed for one block (tests compare them with the reference's). */
    byte[] encodeBlock(byte[] parent, int[] tokens, int from, int n, byte[][] extras) {
        if (profile.algorithm() == HashProfile.Algorithm.SHA256) {
            return pickle.block(parent, tokens, from, n, extras);
        }
        try {
            cborBytes.reset();
            cbor.writeStartArray(null, 3);
            cbor.writeBinary(parent);
            cbor.writeStartArray(null, n);
            for (int i = from; i < from + n; i++) {
                cbor.writeNumber(tokens[i]);
            }
            cbor.writeEndArray();
            if (extras.length == 0) {
                cbor.writeNull();
            } else {
                cbor.writeStartArray(null, extras.length);
                for (byte[] e : extras) {
                    // Jackson splits long strings into chunks (indefinite length); canonical CBOR has one length.
                    cbor.writeUTF8String(e, 0, e.length);
                }
                cbor.writeEndArray();
            }
            cbor.writeEndArray();
            cbor.flush();
            return cborBytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private byte[] encodeSeed(byte[] seed) {
        if (profile.algorithm() == HashProfile.Algorithm.SHA256) {
            return pickle.string(seed);
        }
        try {
            cborBytes.reset();
            cbor.writeUTF8String(seed, 0, seed.length);
            cbor.flush();
            return cborBytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] utf8(String s) {
        return s == null || s.isEmpty() ? null : s.getBytes(StandardCharsets.UTF_8);
    }
}
