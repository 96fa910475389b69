package dev.kvindexer.selectservice.replication;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonBinding;
import dev.kvindexer.web.Responses;
import dev.kvindexer.web.Wire;
import dev.kvindexer.zmq.ZmqEndpoint;
import io.vertx.core.Handler;
import io.vertx.core.json.JsonArray;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * Dynamo's replica-sync peer routes (docs/api/selection.md#replica-sync), the same on the selection service and the
 * slot tracker: {@code GET /replica_sync/peers}, {@code POST /replica_sync/register_peer} (201 new, 200 known) and
 * {@code POST /replica_sync/deregister_peer} (404 {@code peer not found}); 409 {@code replica sync is disabled} without
 * a replica-sync port, whose peer list is empty.
 */
public final class ReplicaPeerRoutes {
    private ReplicaPeerRoutes() {}

    /** A register or deregister body: the peer's PUB endpoint. */
    record Peer(@JsonProperty("endpoint") @Wire.Required String endpoint) {}

    /**
     * @param replicas the service's replica sync, null while off
     * @param post     installs a JSON-body POST route of the service's own body rules
     */
    public static void install(
            Router router, Supplier<ReplicaSync> replicas, BiConsumer<String, Handler<RoutingContext>> post) {
        router.get("/replica_sync/peers").handler(ctx -> {
            ReplicaSync sync = replicas.get();
            List<Object> peers = sync == null ? List.of() : new ArrayList<>(sync.peers());
            Responses.json(ctx, 200, new JsonArray(peers).encode());
        });
        post.accept("/replica_sync/register_peer", ctx -> {
            String endpoint = endpoint(ctx, replicas.get());
            Responses.json(ctx, replicas.get().addPeer(endpoint) ? 201 : 200, Responses.OK);
        });
        post.accept("/replica_sync/deregister_peer", ctx -> {
            if (!replicas.get().removePeer(endpoint(ctx, replicas.get()))) {
                throw new HttpError(404, "peer not found");
            }
            Responses.json(ctx, 200, Responses.OK);
        });
    }

    /** The peer PUB endpoint of a body, validated as listener endpoints are; the body is read first, as Dynamo's. */
    private static String endpoint(RoutingContext ctx, ReplicaSync replicas) {
        String endpoint = JsonBinding.bind(ctx, Peer.class).endpoint();
        if (replicas == null) {
            throw new HttpError(409, "replica sync is disabled");
        }
        String refusal = ZmqEndpoint.invalidMessage(endpoint);
        if (refusal != null) {
            throw new HttpError(400, refusal);
        }
        return endpoint;
    }
}
