package dev.kvindexer.partition;

/**
 * A stream as a listener generation opens it. {@code replayEndpoint} is the engine's ROUTER, or null;
 * {@code defaultLora} the LoRA of its events that name none, or null; {@code sharedStore} marks a Mooncake Store
 * publisher (docs/protocol/events.md#mooncake-store-events); {@code replayHistory} asks the engine at once for
 * everything it still holds of the stream
 * instead of waiting for a live batch to show the gap (a shard rebuilt after every holder of it was lost).
 */
public record StreamSpec(
        long workerId,
        int dpRank,
        long generation,
        String replayEndpoint,
        String defaultLora,
        boolean sharedStore,
        boolean replayHistory) {
    public StreamSpec(long workerId, int dpRank, long generation, String replayEndpoint) {
        this(workerId, dpRank, generation, replayEndpoint, null, false, false);
    }

    public StreamSpec(
            long workerId,
            int dpRank,
            long generation,
            String replayEndpoint,
            String defaultLora,
            boolean sharedStore) {
        this(workerId, dpRank, generation, replayEndpoint, defaultLora, sharedStore, false);
    }
}
