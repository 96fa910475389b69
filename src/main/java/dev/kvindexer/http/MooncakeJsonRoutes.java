package dev.kvindexer.http;

import static dev.kvindexer.http.MooncakeJsonError.invalid;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.hash.LocalHashes;
import dev.kvindexer.index.OwnerMatches;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.Publisher;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PromptHashes;
import dev.kvindexer.partition.QueryResult;
import dev.kvindexer.query.IndexQueries;
import dev.kvindexer.registry.InstanceIds;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.registry.Registrar;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.web.JsonBinding;
import dev.kvindexer.web.Responses;
import dev.kvindexer.zmq.ZmqEndpoint;
import io.vertx.core.Future;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Handlers of the Mooncake JSON flavor (docs/api/mooncake-json.md: the Conductor's documented JSON API) on the routes it shares with
 * Dynamo: the same registry, listeners and partitions, Mooncake's field names, string instance ids, status texts and
 * response shapes.
 */
public final class MooncakeJsonRoutes {
    private final Registrar registrar;
    private final Registry registry;
    private final IndexQueries queries;
    private final MsgpackApi msgpack;

    /**
     * @param registrar what /register and /unregister go through: this node, or the whole cluster
     * @param registry  registered workers and the handles of their partitions
     * @param queries   the index as the query routes ask it
     * @param msgpack   the msgpack API, whose registrations the Go Conductor's {@code /services} lists too
     */
    public MooncakeJsonRoutes(Registrar registrar, Registry registry, IndexQueries queries, MsgpackApi msgpack) {
        this.registrar = registrar;
        this.registry = registry;
        this.queries = queries;
        this.msgpack = msgpack;
    }

    /** Whether the JSON APIs hold any registration (which encoding a plain {@code GET /services} gets). */
    boolean anyRegistered() {
        return !registry.workers(null, null).isEmpty();
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    void register(RoutingContext ctx) {
        MooncakeJsonRequests.Register body = JsonBinding.bind(ctx, MooncakeJsonRequests.Register.class);
        String code = MooncakeJsonError.INVALID_REGISTRATION;
        String endpoint = body.endpoint();
        String replay = body.replayEndpoint();
        String instance = body.instanceId();
        checkEndpoints(endpoint, replay, code);
        long id = InstanceIds.of(instance);
        String name = InstanceIds.isCanonicalDecimal(instance) ? null : instance;
        Publisher publisher = new Publisher(
                name,
                body.publisherType(),
                emptyToNull(body.loraName()),
                emptyToNull(body.salt()),
                emptyToNull(body.workerAddress()));
        RegisterRequest request = new RegisterRequest(
                id,
                body.dpRank(),
                endpoint,
                replay,
                new PartitionKey(body.modelNamed(), body.routingGroup()),
                body.blockSize(),
                publisher);
        registerUnlessHeld(ctx, request, new Registered("registered successfully", instance), code);
    }

    /** Refuses an endpoint, or a replay endpoint when given, that ZMQ cannot connect to. */
    private static void checkEndpoints(String endpoint, String replay, String code) {
        String reason = ZmqEndpoint.invalidReason(endpoint);
        if (reason != null) {
            throw invalid(code, "invalid ZMQ endpoint `" + endpoint + "`: " + reason, "endpoint");
        }
        if (replay != null && (reason = ZmqEndpoint.invalidReason(replay)) != null) {
            throw invalid(
                    code,
                    "invalid replay endpoint `" + replay + "`: invalid ZMQ endpoint `" + replay + "`: " + reason,
                    "replay_endpoint");
        }
    }

    /** Registers {@code request} and answers {@code ok}, at once when the same registration already runs. */
    private void registerUnlessHeld(RoutingContext ctx, RegisterRequest request, Registered ok, String code) {
        Listener existing = registry.listener(request.workerId(), request.dpRank());
        if (existing != null && request.sameAs(existing)) {
            // The Conductor is idempotent for identical registrations: the listener keeps running.
            Responses.answer(ctx, 200, ok);
            return;
        }
        registrar.register(request).onComplete(ar -> {
            if (ar.succeeded()) {
                Responses.answer(ctx, 200, ok);
            } else {
                Responses.error(ctx, conflict(ar.cause(), code));
            }
        });
    }

    /** The registry's conflicts (409 in Dynamo terms) are the flavor's 400 invalid_registration. */
    private static Throwable conflict(Throwable t, String code) {
        return t instanceof Refusal ? invalid(code, t.getMessage(), null) : t;
    }

    /**
     * Removes one subscription, (instance_id, tenant_id, dp_rank) as the Go Conductor keys it: without {@code dp_rank}
     * rank 0, and a key nobody registered is a 404 {@code service not found: <instance>|<tenant>|<rank>}.
     */
    void unregister(RoutingContext ctx) {
        MooncakeJsonRequests.Unregister body = JsonBinding.bind(ctx, MooncakeJsonRequests.Unregister.class);
        String instance = body.instanceId();
        String routingGroup = body.routingGroup();
        int dpRank = body.dpRank();
        long id = InstanceIds.of(instance);
        PartitionKey key = registry.partitionOf(id);
        String serviceKey = instance + "|" + routingGroup + "|" + dpRank;
        if (key == null || !holds(id, routingGroup, dpRank)) {
            throw new MooncakeJsonError(
                    404, MooncakeJsonError.NOT_FOUND, "service not found: " + serviceKey, "instance_id");
        }
        registrar.unregister(id, key.modelName(), routingGroup, dpRank).onComplete(ar -> {
            if (ar.succeeded()) {
                Responses.answer(ctx, 200, new Unregistered("unregistered successfully", List.of(serviceKey)));
            } else {
                Responses.error(ctx, conflict(ar.cause(), MooncakeJsonError.INVALID_REQUEST));
            }
        });
    }

    /** Whether instance {@code id} has rank {@code dpRank} registered under {@code routingGroup}. */
    private boolean holds(long id, String routingGroup, int dpRank) {
        try {
            registry.ranksToUnregister(id, null, routingGroup, dpRank);
            return true;
        } catch (Refusal nothingMatches) {
            return false;
        }
    }

    /** The Go Conductor's answer to {@code /register}: the instance it registered, as the body named it. */
    record Registered(String status, String instanceId) {}

    /** The Go Conductor's answer to {@code /unregister}: the service keys it removed. */
    record Unregistered(String status, List<String> removedInstances) {}

    void query(RoutingContext ctx, Flavor shape) {
        MooncakeJsonRequests.Query body = JsonBinding.bind(ctx, MooncakeJsonRequests.Query.class);
        int[] tokens = body.tokenIds();
        PartitionRef partition = partition(body);
        if (partition == null) {
            answerNone(ctx, shape, body);
            return;
        }
        long seed = BlockHasher.seedFor(emptyToNull(body.loraName()), body.cacheSalt());
        LocalHashes local = LocalHashes.ofTokens(tokens, partition.blockSize(), seed);
        answer(ctx, shape, body, partition, queries.query(partition, local, tokens.length));
    }

    /**
     * Rolling sequence hashes (docs/api/mooncake-json.md#post-query_by_hash), alias {@code block_hash}; {@code lora_name} and {@code cache_salt} are
     * already folded into them. The partition finds the blocks they name and answers as for the same tokens.
     */
    void queryByHash(RoutingContext ctx, Flavor shape) {
        MooncakeJsonRequests.QueryByHash body = JsonBinding.bind(ctx, MooncakeJsonRequests.QueryByHash.class);
        long[] hashes = body.hashes();
        PartitionRef partition = partition(body);
        if (partition == null) {
            answerNone(ctx, shape, body);
            return;
        }
        answer(
                ctx,
                shape,
                body,
                partition,
                queries.query(partition, hashes, PromptHashes.SEQUENCE, (long) hashes.length * partition.blockSize()));
    }

    /**
     * The partition of (model, tenant_id), or null when there is none or the request's block_size is not its: the
     * Go Conductor keys its index by both, so such a query matches nothing and is answered, never refused.
     */
    private PartitionRef partition(MooncakeJsonRequests.Lookup body) {
        PartitionRef partition = queries.partition(new PartitionKey(body.modelNamed(), body.routingGroup()))
                .orElse(null);
        Integer blockSize = body.blockSize();
        return partition == null || (blockSize != null && blockSize != partition.blockSize()) ? null : partition;
    }

    /**
     * A query that matches nothing, answered as the Go Conductor does: every instance registered under the tenant
     * (any model) with zeros, the one asked for by {@code instance_id} even when unknown, and {@code {}} for a tenant
     * nobody registered under.
     */
    private void answerNone(RoutingContext ctx, Flavor shape, MooncakeJsonRequests.Lookup body) {
        String routingGroup = body.routingGroup();
        String only = body.instanceId();
        Long onlyId = only == null ? null : InstanceIds.of(only);
        List<Registry.Member> members = new ArrayList<>();
        Set<PartitionKey> keys = new LinkedHashSet<>();
        for (Registry.WorkerView w : registry.workers(null, routingGroup)) {
            keys.add(w.key());
        }
        for (PartitionKey key : keys) {
            members.addAll(registry.members(key));
        }
        if (only == null && members.stream().allMatch(Registry.Member::store)) {
            Responses.json(ctx, 200, MooncakeJsonAnswers.none(shape));
            return;
        }
        QueryResult nothing = new QueryResult(1, OwnerMatches.of(List.of()), new int[2]);
        Responses.json(ctx, 200, MooncakeJsonAnswers.render(shape, routingGroup, members, onlyId, only, nothing));
    }

    private void answer(
            RoutingContext ctx,
            Flavor shape,
            MooncakeJsonRequests.Lookup body,
            PartitionRef partition,
            Future<IndexQueries.Answer> query) {
        PartitionKey key = partition.key();
        String only = body.instanceId();
        Long onlyId = only == null ? null : InstanceIds.of(only);
        PartitionQuery.answered(query, notFound(key))
                .map(a -> {
                    PartitionQuery.flagMissing(ctx, a.result().missingInstances());
                    return MooncakeJsonAnswers.render(
                            shape, key.routingGroup(), registry.members(key), onlyId, only, a.result());
                })
                .onComplete(ar -> {
                    if (ar.succeeded()) {
                        Responses.json(ctx, 200, ar.result());
                    } else {
                        Responses.error(ctx, ar.cause());
                    }
                });
    }

    private static MooncakeJsonError notFound(PartitionKey key) {
        return new MooncakeJsonError(
                404,
                MooncakeJsonError.NOT_FOUND,
                "no indexer for model=" + key.modelName() + " tenant_id=" + key.routingGroup(),
                "model");
    }

    void services(RoutingContext ctx) {
        List<Registry.WorkerView> workers = registry.workers(null, null);
        msgpack.serviceRows().onComplete(ar -> {
            if (ar.succeeded()) {
                Responses.json(ctx, 200, MooncakeJsonAnswers.services(workers, ar.result()));
            } else {
                Responses.error(ctx, ar.cause());
            }
        });
    }
}
