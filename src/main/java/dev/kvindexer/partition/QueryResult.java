package dev.kvindexer.partition;

import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.OwnerMatches;
import java.util.List;

/**
 * A partition's match of one prompt. {@code sharedReach} is {cpu, disk} in blocks that the partition's Mooncake
 * Stores alone hold of the prompt: the reach of a registered rank with no blocks of its own. {@code missingInstances}
 * counts registered instances a sharded cluster could not answer for (no live node held their shard): they are
 * absent from {@code owners}, not matched with zero.
 */
public record QueryResult(int blockSize, OwnerMatches owners, int[] sharedReach, int missingInstances) {
    /** A complete answer. */
    public QueryResult(int blockSize, OwnerMatches owners, int[] sharedReach) {
        this(blockSize, owners, sharedReach, 0);
    }

    /** The matches as records, built by the caller rather than on the partition's event loop. */
    public List<OwnerMatch> matches() {
        return owners.toList();
    }
}
