package dev.kvindexer.partition;

/**
 * Asks the ingest side to fetch batches [start, end) of a stream from its engine's replay ROUTER and send them,
 * then a {@link PartitionMessages.ReplayFinished}, to {@code partitionAddress}. Replayed batches decode like live
 * ones: same block size, same default LoRA (null for the base model).
 */
public record ReplayRequest(String partitionAddress, StreamId stream, long generation, long replayId,
                            String replayEndpoint, int blockSize, String defaultLora, long start, long end) {
}
