package dev.kvindexer.partition;

/**
 * A stream as a listener generation opens it. {@code replayEndpoint} is the engine's ROUTER, or null;
 * {@code defaultLora} the LoRA of its events that name none, or null; {@code sharedStore} marks a Mooncake Store
 * publisher (SPEC §5.3).
 */
public record StreamSpec(long workerId, int dpRank, long generation, String replayEndpoint, String defaultLora,
                         boolean sharedStore) {
    public StreamSpec(long workerId, int dpRank, long generation, String replayEndpoint) {
        this(workerId, dpRank, generation, replayEndpoint, null, false);
    }
}
