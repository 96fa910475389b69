package dev.kvindexer.sim;

/**
 * A prompt cut into complete blocks: the tokens of those blocks, their local hashes (what the indexer
 * recomputes) and the engine's own hashes (what the engine publishes). Arrays are not copied; treat as immutable.
 */
public record BlockChain(int blockSize, int[] tokens, long[] localHashes, long[] engineHashes) {
    public BlockChain {
        if (localHashes.length != engineHashes.length || tokens.length != localHashes.length * blockSize) {
            throw new IllegalArgumentException("inconsistent chain: " + tokens.length + " tokens, " + localHashes.length
                    + " local, " + engineHashes.length + " engine hashes, block size " + blockSize);
        }
    }

    public int size() {
        return localHashes.length;
    }
}
