package dev.kvindexer.grpc;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * SGLang's block hashes as its engine publishes them and its router asks with them: block k is SHA-256 of block k-1's
 * whole digest followed by its tokens as u32 little-endian; the hash is the digest's first 8 bytes, big-endian, signed.
 */
final class SglangBlockHashes {
    private SglangBlockHashes() {}

    /** The hashes of {@code tokens}' complete blocks of {@code blockSize}. */
    static long[] of(int[] tokens, int blockSize) {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        int blocks = tokens.length / blockSize;
        long[] out = new long[blocks];
        byte[] previous = null;
        for (int b = 0; b < blocks; b++) {
            if (previous != null) {
                sha.update(previous);
            }
            ByteBuffer page = ByteBuffer.allocate(4 * blockSize).order(ByteOrder.LITTLE_ENDIAN);
            for (int t : Arrays.copyOfRange(tokens, b * blockSize, (b + 1) * blockSize)) {
                page.putInt(t);
            }
            sha.update(page.array());
            previous = sha.digest();
            out[b] = ByteBuffer.wrap(previous, 0, 8).getLong();
        }
        return out;
    }
}
