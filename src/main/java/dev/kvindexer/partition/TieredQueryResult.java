package dev.kvindexer.partition;

import dev.kvindexer.index.TieredMatch;

/**
 * A partition's tier-by-tier match of one prompt; {@code missingInstances} as in {@link QueryResult}: registered
 * instances a sharded cluster could not answer for, absent from the match.
 */
public record TieredQueryResult(int blockSize, TieredMatch match, int missingInstances) {
    /** A complete answer. */
    public TieredQueryResult(int blockSize, TieredMatch match) {
        this(blockSize, match, 0);
    }
}
