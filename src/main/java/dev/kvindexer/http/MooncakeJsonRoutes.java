package dev.kvindexer.http;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.index.OwnerMatches;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.Publisher;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.QueryResult;
import dev.kvindexer.query.IndexQueries;
import dev.kvindexer.registry.InstanceIds;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.registry.Registrar;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.web.JsonRequest;
import dev.kvindexer.web.Responses;
import dev.kvindexer.zmq.ZmqEndpoint;
import io.vertx.core.json.Json;
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

    private static MooncakeJsonError invalid(String code, String reason, String field) {
        return new MooncakeJsonError(400, code, reason, field);
    }

    /** Mooncake's model member: {@code modelname} on register, {@code model} on query; each accepts the others. */
    private static String model(JsonRequest body, String code) {
        for (String field : new String[] {"model", "modelname", "model_name"}) {
            String m = body.optionalString(field);
            if (m != null) {
                return m;
            }
        }
        throw invalid(code, "missing field `modelname` (or `model`)", "modelname");
    }

    private static String instanceId(JsonRequest body, String code) {
        String id = body.optionalId("instance_id");
        if (id == null || id.isEmpty()) {
            throw invalid(code, "missing field `instance_id`", "instance_id");
        }
        return id;
    }

    private static String routingGroup(JsonRequest body) {
        String t = body.optionalString("tenant_id");
        return t == null ? PartitionKey.DEFAULT : t;
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    void register(RoutingContext ctx) {
        JsonRequest body = JsonRequest.of(ctx);
        String code = MooncakeJsonError.INVALID_REGISTRATION;
        String endpoint = body.optionalString("endpoint");
        if (endpoint == null) {
            throw invalid(code, "missing field `endpoint`", "endpoint");
        }
        String type = publisherType(body, code);
        String model = model(body, code);
        String instance = instanceId(body, code);
        int blockSize = blockSize(body, code);
        int dpRank = body.optionalU32("dp_rank", 0);
        Long cacheGroup = body.optionalI64("cache_group");
        if (cacheGroup != null && cacheGroup != 0) {
            throw invalid(code, "cache_group " + cacheGroup + " is not supported; only 0", "cache_group");
        }
        String replay = body.optionalString("replay_endpoint");
        String salt = body.optionalString("additionalsalt");
        if (salt == null) {
            salt = body.optionalString("additional_salt");
        }
        checkEndpoints(endpoint, replay, code);
        long id = InstanceIds.of(instance);
        String name = InstanceIds.isCanonicalDecimal(instance) ? null : instance;
        Publisher publisher =
                new Publisher(name, type, emptyToNull(body.optionalString("lora_name")), emptyToNull(salt));
        RegisterRequest request = new RegisterRequest(
                id, dpRank, endpoint, replay, new PartitionKey(model, routingGroup(body)), blockSize, publisher);
        String ok = "{\"status\":\"registered successfully\",\"instance_id\":" + Json.encode(instance) + "}";
        registerUnlessHeld(ctx, request, ok, code);
    }

    /** The publisher's canonical type: vLLM, SGLang or Mooncake, whatever case the body spells it in. */
    private static String publisherType(JsonRequest body, String code) {
        String typeText = body.optionalString("type");
        String type = Publisher.canonicalType(typeText);
        if (type == null) {
            throw invalid(
                    code,
                    typeText == null
                            ? "missing field `type`"
                            : "unknown type `" + typeText + "`: expected vLLM, SGLang or Mooncake",
                    "type");
        }
        return type;
    }

    private static int blockSize(JsonRequest body, String code) {
        if (!body.has("block_size")) {
            throw invalid(code, "missing field `block_size`", "block_size");
        }
        int blockSize = body.optionalU32("block_size", 0);
        if (blockSize == 0) {
            throw invalid(code, "block_size must be positive", "block_size");
        }
        return blockSize;
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
    private void registerUnlessHeld(RoutingContext ctx, RegisterRequest request, String ok, String code) {
        Listener existing = registry.listener(request.workerId(), request.dpRank());
        if (existing != null && request.sameAs(existing)) {
            // The Conductor is idempotent for identical registrations: the listener keeps running.
            Responses.json(ctx, 200, ok);
            return;
        }
        registrar.register(request).onComplete(ar -> {
            if (ar.succeeded()) {
                Responses.json(ctx, 200, ok);
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
        JsonRequest body = JsonRequest.of(ctx);
        String instance = instanceId(body, MooncakeJsonError.INVALID_REQUEST);
        String routingGroup = routingGroup(body);
        Integer given = body.optionalRank("dp_rank");
        int dpRank = given == null ? 0 : given;
        long id = InstanceIds.of(instance);
        PartitionKey key = registry.partitionOf(id);
        String serviceKey = instance + "|" + routingGroup + "|" + dpRank;
        if (key == null || !holds(id, routingGroup, dpRank)) {
            throw new MooncakeJsonError(
                    404, MooncakeJsonError.NOT_FOUND, "service not found: " + serviceKey, "instance_id");
        }
        registrar.unregister(id, key.modelName(), routingGroup, dpRank).onComplete(ar -> {
            if (ar.succeeded()) {
                Responses.json(ctx, 200, unregistered(instance, routingGroup, List.of(dpRank)));
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

    private static String unregistered(String instance, String routingGroup, List<Integer> ranks) {
        StringBuilder sb = new StringBuilder("{\"status\":\"unregistered successfully\",\"removed_instances\":[");
        for (int i = 0; i < ranks.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(Json.encode(instance + "|" + routingGroup + "|" + ranks.get(i)));
        }
        return sb.append("]}").toString();
    }

    void query(RoutingContext ctx, Flavor shape) {
        JsonRequest body = JsonRequest.of(ctx);
        String code = MooncakeJsonError.INVALID_REQUEST;
        if (!body.has("token_ids")) {
            throw invalid(code, "missing field `token_ids`", "token_ids");
        }
        int[] tokens = body.u32Array("token_ids");
        String lora = body.optionalString("lora_name");
        Long loraId = body.optionalI64("lora_id");
        if (loraId != null && lora != null) {
            throw invalid(
                    code,
                    "lora_id is deprecated and cannot be used together with lora_name; send lora_name only",
                    "lora_id");
        }
        if (loraId != null && loraId != -1) {
            throw invalid(
                    code,
                    "lora_id is not supported: an adapter id cannot be mapped to the name its blocks are "
                            + "hashed with; use lora_name",
                    "lora_id");
        }
        String salt = body.optionalString("cache_salt");
        PartitionRef partition = partition(body);
        if (partition == null) {
            answerNone(ctx, shape, body);
            return;
        }
        long seed = BlockHasher.seedFor(emptyToNull(lora), salt);
        long[] local = BlockHasher.localHashes(tokens, partition.blockSize(), seed);
        answer(ctx, shape, body, partition, local, false, tokens.length);
    }

    /**
     * Rolling sequence hashes (docs/api/mooncake-json.md#post-query_by_hash), alias {@code block_hash}; {@code lora_name} and {@code cache_salt} are
     * already folded into them. The partition finds the blocks they name and answers as for the same tokens.
     */
    void queryByHash(RoutingContext ctx, Flavor shape) {
        JsonRequest body = JsonRequest.of(ctx);
        String field = body.has("seq_hashes") ? "seq_hashes" : "block_hash";
        if (!body.has(field)) {
            throw invalid(MooncakeJsonError.INVALID_REQUEST, "missing field `seq_hashes`", "seq_hashes");
        }
        long[] hashes = body.u64OrStringArray(field);
        PartitionRef partition = partition(body);
        if (partition == null) {
            answerNone(ctx, shape, body);
            return;
        }
        answer(ctx, shape, body, partition, hashes, true, (long) hashes.length * partition.blockSize());
    }

    /**
     * The partition of (model, tenant_id), or null when there is none or the request's block_size is not its: the
     * Go Conductor keys its index by both, so such a query matches nothing and is answered, never refused.
     */
    private PartitionRef partition(JsonRequest body) {
        String model = model(body, MooncakeJsonError.INVALID_REQUEST);
        PartitionRef partition =
                queries.partition(new PartitionKey(model, routingGroup(body))).orElse(null);
        Integer blockSize = body.has("block_size") ? body.optionalU32("block_size", 0) : null;
        return partition == null || (blockSize != null && blockSize != partition.blockSize()) ? null : partition;
    }

    /**
     * A query that matches nothing, answered as the Go Conductor does: every instance registered under the tenant
     * (any model) with zeros, the one asked for by {@code instance_id} even when unknown, and {@code {}} for a tenant
     * nobody registered under.
     */
    private void answerNone(RoutingContext ctx, Flavor shape, JsonRequest body) {
        String routingGroup = routingGroup(body);
        String only = body.optionalId("instance_id");
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
            JsonRequest body,
            PartitionRef partition,
            long[] hashes,
            boolean sequence,
            long queryTokens) {
        PartitionKey key = partition.key();
        String only = body.optionalId("instance_id");
        Long onlyId = only == null ? null : InstanceIds.of(only);
        PartitionQuery.answered(queries.query(partition, hashes, sequence, queryTokens), notFound(key))
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
