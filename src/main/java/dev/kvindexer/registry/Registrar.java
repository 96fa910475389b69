package dev.kvindexer.registry;

import dev.kvindexer.event.Refusal;
import io.vertx.core.Future;

/**
 * What {@code /register} and {@code /unregister} do: apply to this node alone ({@link LocalRegistrar}) or to
 * every node of the cluster ({@code cluster.ClusterRegistrar}). Failures are {@link Refusal}s.
 */
public interface Registrar {
    Future<Void> register(RegisterRequest request);

    /** docs/api/dynamo.md#post-unregister: {@code routingGroup} null means any group of the model; {@code dpRank} null means every rank. */
    Future<Void> unregister(long workerId, String modelName, String routingGroup, Integer dpRank);
}
