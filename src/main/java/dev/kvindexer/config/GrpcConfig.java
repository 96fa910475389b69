package dev.kvindexer.config;

/**
 * The gRPC port serving SGLang's KVIndexer contract (docs/api/sglang-grpc.md), off unless a port is given.
 *
 * @param host              bind address (the HTTP one)
 * @param port              port; 0 picks a free one (tests)
 * @param prefixMaxInflight prefix queries answered at once; more are refused with RESOURCE_EXHAUSTED
 * @param modelName         the model (with {@code routingGroup}) whose registered engines prefix queries also ask:
 *                          SGLang's messages name no model
 * @param routingGroup      its routing group
 */
public record GrpcConfig(String host, int port, int prefixMaxInflight, String modelName, String routingGroup) {
    public static final int DEFAULT_PREFIX_MAX_INFLIGHT = 32;

    public GrpcConfig {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("--grpc-port must be 0..65535: " + port);
        }
        if (prefixMaxInflight <= 0) {
            throw new IllegalArgumentException("--grpc-prefix-max-inflight must be positive: " + prefixMaxInflight);
        }
    }
}
