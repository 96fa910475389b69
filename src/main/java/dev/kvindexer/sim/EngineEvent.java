package dev.kvindexer.sim;

/** An event as an engine would publish it, before encoding (engine hashes as unsigned longs). */
public sealed interface EngineEvent permits EngineEvent.Store, EngineEvent.Remove, EngineEvent.ClearAll {

    /** BlockStored; {@code parent} null means root; {@code medium} null means nil on the wire. */
    record Store(long[] blockHashes, Long parent, int[] tokenIds, int blockSize, String medium, String loraName)
            implements EngineEvent {}

    record Remove(long[] blockHashes, String medium) implements EngineEvent {}

    record ClearAll() implements EngineEvent {}
}
