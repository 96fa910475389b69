package dev.kvindexer.select;

/** A partition's fixed properties, taken from its first schedulable worker. */
public record PartitionInfo(int blockSize, boolean eagle) {}
