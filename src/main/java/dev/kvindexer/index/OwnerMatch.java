package dev.kvindexer.index;

/**
 * One (worker, dp_rank)'s matched prefix, in blocks, cumulative over tiers
 * (docs/protocol/index.md#lower-tier-extension-and-the-per-instance-breakdown):
 * {@code gpuBlocks <= cpuBlocks <= diskBlocks}.
 */
public record OwnerMatch(long workerId, int dpRank, int gpuBlocks, int cpuBlocks, int diskBlocks) {}
