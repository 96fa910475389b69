package dev.kvindexer.ingest;

import java.util.Locale;

/**
 * What a registration says about its publisher beyond the endpoint. Dynamo registrations carry none of it
 * ({@link #DYNAMO}); Mooncake ones (docs/api/mooncake-json.md#post-register) name the instance with a string, say what publishes, and may give the
 * LoRA of events that name none.
 *
 * @param name           the Mooncake {@code instance_id} string, or null for a numeric Dynamo id
 * @param type           {@code vLLM}, {@code SGLang} or {@code Mooncake} as registered, or null (Dynamo)
 * @param defaultLora    LoRA adapter of events without {@code lora_name}, or null for the base model
 * @param additionalSalt the registration's {@code additionalsalt}: kept and listed, not hashed (docs/api/mooncake-json.md#salts)
 * @param workerAddress  the URL a router reaches the engine at ({@code worker_address}; SGLang's router matches it
 *                       against its {@code --worker-urls}, docs/api/sglang-grpc.md), or null
 */
public record Publisher(String name, String type, String defaultLora, String additionalSalt, String workerAddress) {
    public static final Publisher DYNAMO = new Publisher(null, null, null, null, null);

    /** A Dynamo registration's publisher: nothing but, perhaps, its router-facing address (empty: none). */
    public static Publisher dynamo(String workerAddress) {
        return workerAddress == null || workerAddress.isEmpty()
                ? DYNAMO
                : new Publisher(null, null, null, null, workerAddress);
    }

    public static final String MOONCAKE_STORE = "Mooncake";

    /** The canonical spelling of a Mooncake publisher type (matched case-insensitively), or null when unknown. */
    public static String canonicalType(String type) {
        if (type == null) {
            return null;
        }
        return switch (type.toLowerCase(Locale.ROOT)) {
            case "vllm" -> "vLLM";
            case "sglang" -> "SGLang";
            case "mooncake" -> MOONCAKE_STORE;
            default -> null;
        };
    }

    /**
     * A Mooncake Store: a shared store owner of its partition rather than an engine instance
     * (docs/protocol/events.md#mooncake-store-events).
     */
    public boolean isStore() {
        return MOONCAKE_STORE.equals(type);
    }
}
