package dev.kvindexer.partition;

/** {@code heldPerTier[t]}: (block, holder) pairs of tier ordinal t; {@code deviceBlocks}: distinct device blocks. */
public record PartitionStats(long[] heldPerTier, long deviceBlocks) {
}
