package dev.kvindexer.index;

/**
 * One (worker, dp_rank)'s matched prefix, in blocks, cumulative over tiers (SPEC §6.8):
 * {@code gpuBlocks <= cpuBlocks <= diskBlocks}.
 */
public record OwnerMatch(long workerId, int dpRank, int gpuBlocks, int cpuBlocks, int diskBlocks) {}
