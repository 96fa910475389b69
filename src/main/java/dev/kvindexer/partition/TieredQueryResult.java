package dev.kvindexer.partition;

import dev.kvindexer.index.TieredMatch;

/** A partition's tier-by-tier match of one prompt. */
public record TieredQueryResult(int blockSize, TieredMatch match) {
}
