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
 * @param maxWorkers        the most workers SGLang's bridge may configure or report at once
 * @param maxPlacements     the most (block, worker, tier) placements its reports may make the node hold
 * @param idleTimeout       a connection that reads nothing this long is closed (the HTTP port's idle timeout)
 */
public record GrpcConfig(
        String host,
        int port,
        int prefixMaxInflight,
        String modelName,
        String routingGroup,
        int maxWorkers,
        long maxPlacements,
        java.time.Duration idleTimeout) {
    public static final int DEFAULT_PREFIX_MAX_INFLIGHT = 32;
    public static final int DEFAULT_MAX_WORKERS = 65_536;
    /** About 1 GiB of heap at worst (a block, its placement and a worker's holding of it per placement). */
    public static final long DEFAULT_MAX_PLACEMENTS = 16L * 1024 * 1024;

    /** Default limits. */
    public GrpcConfig(String host, int port, int prefixMaxInflight, String modelName, String routingGroup) {
        this(
                host,
                port,
                prefixMaxInflight,
                modelName,
                routingGroup,
                DEFAULT_MAX_WORKERS,
                DEFAULT_MAX_PLACEMENTS,
                HttpConfig.DEFAULT.idleTimeout());
    }

    public GrpcConfig {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("--grpc-port must be 0..65535: " + port);
        }
        if (prefixMaxInflight <= 0) {
            throw new IllegalArgumentException("--grpc-prefix-max-inflight must be positive: " + prefixMaxInflight);
        }
        if (maxWorkers <= 0) {
            throw new IllegalArgumentException("--grpc-max-workers must be positive: " + maxWorkers);
        }
        if (idleTimeout == null || idleTimeout.isNegative() || idleTimeout.isZero()) {
            throw new IllegalArgumentException("the gRPC idle timeout must be positive: " + idleTimeout);
        }
        if (maxPlacements <= 0) {
            throw new IllegalArgumentException("--grpc-max-placements must be positive: " + maxPlacements);
        }
    }
}
