package dev.kvindexer.conductor;

import dev.kvindexer.hash.HashProfile;

/**
 * One checked registration of the C++ Mooncake Conductor (docs/api/mooncake-cpp.md#post-register): a {@code vLLM} or
 * {@code SGLang} engine rank whose GPU blocks feed its context, or a {@code Mooncake} Store publisher whose objects
 * feed whatever contexts they name.
 * {@code tenantId} is already normalised ({@code ""} is {@code default}); {@code cacheGroup} is null when the request
 * did not name one (only 0 is accepted).
 */
public record CppConductorRegistration(
        String endpoint,
        String type,
        String modelName,
        String instanceId,
        long blockSize,
        int dpRank,
        HashProfile profile,
        String replayEndpoint,
        String loraName,
        String tenantId,
        Integer cacheGroup) {
    public static final String ENGINE = "vLLM";
    /** The newest Conductor's second engine type: SGLang publishes vLLM's event batches, so it is an engine too. */
    public static final String SGLANG = "SGLang";

    public static final String STORE = "Mooncake";

    /** {@code <instance_id>|<tenant_id>|<dp_rank>}, the reference's service key. */
    public String serviceKey() {
        return instanceId + "|" + tenantId + "|" + dpRank;
    }

    public boolean engine() {
        return ENGINE.equals(type) || SGLANG.equals(type);
    }

    /** The context this registration names (an engine's own; a Store publisher's only for the profile check). */
    public CppConductorState.ContextKey context() {
        return new CppConductorState.ContextKey(tenantId, modelName, loraName, blockSize);
    }
}
