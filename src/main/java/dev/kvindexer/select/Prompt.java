package dev.kvindexer.select;

import dev.kvindexer.event.Refusal;
import dev.kvindexer.hash.BlockHasher;
import java.util.random.RandomGenerator;

/**
 * A request's prompt normalized (docs/api/selection.md#prompts): the local block hashes the index is asked for, the sequence hashes that
 * identify its blocks in the active load, and its length in tokens.
 */
public record Prompt(long[] blockHashes, long[] sequenceHashes, long isl) {
    /** The complete blocks of the prompt ({@code nf}). */
    public int completeBlocks() {
        return sequenceHashes.length;
    }

    /**
     * The token form: local hashes of the complete blocks with the seed of the LoRA name and salt, multimodal hashes
     * per block ({@code mmHashes[i]}, null or empty for none), Eagle windows when asked; the sequence hashes chain
     * them, or are random when KV reuse is not assumed.
     */
    public static Prompt ofTokens(
            int[] tokens,
            int blockSize,
            long seed,
            long[][] mmHashes,
            boolean eagle,
            boolean assumeKvReuse,
            RandomGenerator random) {
        if (tokens.length == 0) {
            throw Refusal.badRequest("isl_tokens must be greater than 0");
        }
        int blocks = eagle ? Math.max(0, (tokens.length - 1) / blockSize) : tokens.length / blockSize;
        long[] local = new long[blocks];
        for (int i = 0; i < blocks; i++) {
            long[] mm = mmHashes != null && i < mmHashes.length ? mmHashes[i] : null;
            if (eagle) {
                local[i] = BlockHasher.eagleWindowHash(tokens, i, blockSize, seed);
            } else if (mm != null && mm.length > 0) {
                local[i] = BlockHasher.hashTokensWithMm(tokens, i * blockSize, blockSize, mm, seed);
            } else {
                local[i] = BlockHasher.hashTokens(tokens, i * blockSize, blockSize, seed);
            }
        }
        long[] sequence;
        if (assumeKvReuse) {
            sequence = BlockHasher.sequenceHashes(local);
        } else {
            sequence = new long[blocks];
            for (int i = 0; i < blocks; i++) {
                sequence[i] = random.nextLong();
            }
        }
        return new Prompt(local, sequence, tokens.length);
    }

    /**
     * The hash form, checked in the reference's order. {@code blockHashes} may be null only where the route does not
     * need them ({@code blocksRequired} false: the reservation routes), and then the prompt asks the index nothing.
     */
    public static Prompt ofHashes(long[] blockHashes, long[] sequenceHashes, Long isl, boolean blocksRequired) {
        if (blockHashes == null && blocksRequired) {
            throw Refusal.badRequest("block_hashes is required without token_ids");
        }
        if (sequenceHashes == null) {
            throw Refusal.badRequest("sequence_hashes is required without token_ids");
        }
        if (isl == null) {
            throw Refusal.badRequest("isl_tokens is required without token_ids");
        }
        if (isl <= 0) {
            throw Refusal.badRequest("isl_tokens must be greater than 0");
        }
        if (blockHashes != null && blockHashes.length != sequenceHashes.length) {
            throw Refusal.badRequest("block_hashes length " + blockHashes.length + " must match sequence_hashes length "
                    + sequenceHashes.length);
        }
        return new Prompt(blockHashes == null ? new long[0] : blockHashes, sequenceHashes, isl);
    }
}
