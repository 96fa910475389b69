package dev.kvindexer.http;

import dev.kvindexer.cluster.PeerDirectory;
import dev.kvindexer.cluster.PeerSet;
import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.hash.LocalHashes;
import dev.kvindexer.ingest.Publisher;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PromptHashes;
import dev.kvindexer.partition.QueryResult;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.query.IndexQueries;
import dev.kvindexer.registry.InstanceIds;
import dev.kvindexer.registry.LocalRegistrar;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.registry.Registrar;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonBinding;
import dev.kvindexer.web.MsgpackBodies;
import dev.kvindexer.web.Responses;
import dev.kvindexer.zmq.ZmqEndpoint;
import io.vertx.core.Future;
import io.vertx.ext.web.RoutingContext;

/** Handlers of the Dynamo-flavor API (docs/api/dynamo.md): parse, validate, ask the registry or a partition, render. */
public final class DynamoRoutes {
    private final Registrar registrar;
    private final LocalRegistrar registrations;
    private final Registry registry;
    private final Watermarks watermarks;
    private final PeerDirectory peers;
    private final IndexQueries queries;
    private final DumpAdmission dumps;
    private final boolean tenantFallback;

    /**
     * @param registrar      what /register and /unregister go through: this node, or the whole cluster
     * @param registrations  this node's own registrations (the test routes' pause and resume)
     * @param registry       registered workers and the handles of their partitions
     * @param watermarks     every stream's watermark and whether the index holds it exactly
     * @param peers          /register_peer, /deregister_peer and /peers
     * @param queries        the index as the query routes ask it
     * @param dumps          how many /dump bodies may be written at once
     * @param tenantFallback tenant_id is the group when routing_group is absent, and is echoed
     */
    public DynamoRoutes(
            Registrar registrar,
            LocalRegistrar registrations,
            Registry registry,
            Watermarks watermarks,
            PeerDirectory peers,
            IndexQueries queries,
            DumpAdmission dumps,
            boolean tenantFallback) {
        this.registrar = registrar;
        this.registrations = registrations;
        this.registry = registry;
        this.watermarks = watermarks;
        this.peers = peers;
        this.queries = queries;
        this.dumps = dumps;
        this.tenantFallback = tenantFallback;
    }

    /**
     * The group of a /register or /query body (docs/api/dynamo.md#post-query_by_hash, docs/api/dynamo.md#partitions-routing_group-and-tenant_id): routing_group, "default" when absent. Both it and
     * tenant_id must be strings when present (null is a shape error, as serde reads a string with a default);
     * tenant_id is otherwise ignored unless the node keeps the old fallback.
     */
    private String routingGroup(String routingGroup, String tenantId) {
        if (routingGroup == null && tenantFallback) {
            routingGroup = tenantId;
        }
        return routingGroup == null ? PartitionKey.DEFAULT : routingGroup;
    }

    void register(RoutingContext ctx) {
        DynamoRequests.Register body = JsonBinding.bind(ctx, DynamoRequests.Register.class);
        String endpoint = body.endpoint();
        String replay = body.replayEndpoint();
        String refusal = ZmqEndpoint.invalidMessage(endpoint);
        if (refusal != null) {
            throw new HttpError(400, refusal);
        }
        if (replay != null && (refusal = ZmqEndpoint.invalidMessage(replay)) != null) {
            throw new HttpError(400, "invalid replay endpoint `" + replay + "`: " + refusal);
        }
        if (body.blockSize() == 0) {
            throw new HttpError(400, "block_size must be positive");
        }
        PartitionKey key = new PartitionKey(body.modelName(), routingGroup(body.routingGroup(), body.tenantId()));
        RegisterRequest request = new RegisterRequest(
                body.instanceId(),
                body.dpRank(),
                endpoint,
                replay,
                key,
                body.blockSize(),
                Publisher.dynamo(body.workerAddress()));
        Responses.ok(ctx, registrar.register(request), 201);
    }

    void unregister(RoutingContext ctx) {
        DynamoRequests.Unregister body = JsonBinding.bind(ctx, DynamoRequests.Unregister.class);
        // Without a group the instance goes wherever it is, every rank.
        String routingGroup = body.routingGroup();
        Integer dpRank = body.dpRank();
        if (tenantFallback) {
            routingGroup = routingGroup != null ? routingGroup : body.tenantId();
        } else if (routingGroup == null) {
            dpRank = null;
        }
        Responses.ok(ctx, registrar.unregister(body.instanceId(), body.modelName(), routingGroup, dpRank), 200);
    }

    void workers(RoutingContext ctx) {
        String model = ctx.queryParams().get("model_name");
        String routingGroup = ctx.queryParams().get("routing_group");
        if (routingGroup == null && tenantFallback) {
            routingGroup = ctx.queryParams().get("tenant_id");
        }
        Responses.answer(ctx, 200, WorkersJson.of(registry.workers(model, routingGroup), watermarks, tenantFallback));
    }

    void query(RoutingContext ctx) {
        DynamoRequests.Query body = JsonBinding.bind(ctx, DynamoRequests.Query.class);
        int[] tokens = body.tokenIds();
        PartitionRef partition = partition(body.modelName(), routingGroup(body.routingGroup(), body.tenantId()));
        DynamoRequests.HashSeed salt = JsonBinding.bind(ctx, DynamoRequests.HashSeed.class);
        long seed = BlockHasher.seedFor(salt.loraName(), salt.cacheSalt());
        LocalHashes hashes = LocalHashes.ofTokens(tokens, partition.blockSize(), seed);
        ask(ctx, partition, queries.query(partition, hashes, tokens.length));
    }

    void queryByHash(RoutingContext ctx) {
        DynamoRequests.QueryByHash body = JsonBinding.bind(ctx, DynamoRequests.QueryByHash.class);
        long[] hashes = body.blockHashes();
        String model = body.modelName();
        String routingGroup = routingGroup(body.routingGroup(), body.tenantId());
        // Checked before the partition: a salted lookup is refused even for a model nobody registered.
        if (body.cacheSalt() != null) {
            throw new HttpError(
                    400,
                    "cache_salt is not accepted by /query_by_hash; "
                            + "block_hashes must already include the intended cache salt");
        }
        PartitionRef partition = partition(model, routingGroup);
        ask(
                ctx,
                partition,
                queries.query(partition, hashes, PromptHashes.LOCAL, (long) hashes.length * partition.blockSize()));
    }

    /**
     * Dynamo's remote-indexer lookup (docs/api/dynamo.md#post-query_tiered_by_hash): the router sends every device-tier lookup here and reads the match
     * tier by tier, in blocks. Keyed by {@code routing_group} alone; any other member is ignored.
     */
    void queryTieredByHash(RoutingContext ctx) {
        DynamoRequests.QueryTieredByHash body = JsonBinding.bind(ctx, DynamoRequests.QueryTieredByHash.class);
        long[] hashes = body.blockHashes();
        String routingGroup = body.routingGroup();
        PartitionRef partition =
                partition(body.modelName(), routingGroup == null ? PartitionKey.DEFAULT : routingGroup);
        PartitionQuery.answered(
                        queries.queryTiered(partition, hashes, (long) hashes.length * partition.blockSize()),
                        noIndexer(partition.key()))
                .onComplete(ar -> {
                    if (ar.succeeded()) {
                        PartitionQuery.flagMissing(ctx, ar.result().missingInstances());
                        Responses.json(ctx, 200, TieredJson.bytes(ar.result()));
                    } else {
                        Responses.error(ctx, ar.cause());
                    }
                });
    }

    private PartitionRef partition(String model, String routingGroup) {
        return queries.partition(new PartitionKey(model, routingGroup))
                .orElseThrow(() -> noIndexer(model, routingGroup));
    }

    private static HttpError noIndexer(String model, String routingGroup) {
        return new HttpError(404, "no indexer for model=" + model + " routing_group=" + routingGroup);
    }

    private static HttpError noIndexer(PartitionKey key) {
        return noIndexer(key.modelName(), key.routingGroup());
    }

    private void ask(RoutingContext ctx, PartitionRef partition, Future<IndexQueries.Answer> answer) {
        PartitionQuery.answered(answer, noIndexer(partition.key())).onComplete(ar -> {
            if (ar.succeeded()) {
                QueryResult r = ar.result().result();
                PartitionQuery.flagMissing(ctx, r.missingInstances());
                Responses.json(ctx, 200, ScoreJson.render(ar.result().matches(), r.blockSize()));
            } else {
                Responses.error(ctx, ar.cause());
            }
        });
    }

    /**
     * Dynamo's JSON dump, or the binary snapshot a recovering kvindexer node asks for by its Accept header; both
     * streamed (IndexDump). A client that asks for msgpack gets the JSON document encoded whole.
     */
    void dump(RoutingContext ctx) {
        boolean binary = SnapshotWriter.acceptedBy(ctx.request().getHeader("accept"));
        String instance = ctx.queryParams().get("instance_id");
        if (instance != null) {
            instanceDump(ctx, instance, binary);
            return;
        }
        if (!binary && MsgpackBodies.responseType(ctx) != null) {
            IndexDump.whole(ctx, registry, dumps);
            return;
        }
        IndexDump.serve(registry, ctx.response(), binary, dumps);
    }

    /**
     * One instance's exact snapshot, for a peer repairing a stream from this node. Binary only: the JSON dump has no
     * place for a stream's loss, so a JSON copy could pass for exact when it is not.
     */
    private void instanceDump(RoutingContext ctx, String instance, boolean binary) {
        if (!InstanceIds.isCanonicalDecimal(instance)) {
            throw new HttpError(400, "instance_id must be an unsigned 64-bit decimal, got `" + instance + "`");
        }
        if (!binary) {
            throw new HttpError(
                    406,
                    "/dump?instance_id is served only as " + SnapshotWriter.MEDIA_TYPE + " (ask for it in Accept)");
        }
        IndexDump.instance(registry, InstanceIds.of(instance)).onComplete(ar -> {
            if (ar.succeeded()) {
                ctx.response()
                        .setStatusCode(200)
                        .putHeader("content-type", SnapshotWriter.MEDIA_TYPE)
                        .end(ar.result());
            } else {
                Responses.error(ctx, ar.cause());
            }
        });
    }

    void pauseListener(RoutingContext ctx) {
        DynamoRequests.InstanceRank body = JsonBinding.bind(ctx, DynamoRequests.InstanceRank.class);
        Responses.ok(ctx, registrations.pause(body.instanceId(), body.dpRank()), 200);
    }

    void resumeListener(RoutingContext ctx) {
        DynamoRequests.InstanceRank body = JsonBinding.bind(ctx, DynamoRequests.InstanceRank.class);
        Responses.ok(ctx, registrations.resume(body.instanceId(), body.dpRank()), 200);
    }

    void registerPeer(RoutingContext ctx) {
        String url = JsonBinding.bind(ctx, DynamoRequests.Peer.class).url();
        if (!peers.add(url)) {
            throw new HttpError(
                    url.length() > PeerSet.MAX_URL_CHARS ? 422 : 409,
                    url.length() > PeerSet.MAX_URL_CHARS
                            ? "`url` is longer than " + PeerSet.MAX_URL_CHARS + " characters"
                            : "peer list is full: " + PeerSet.MAX_PEERS + " peers are registered");
        }
        Responses.json(ctx, 201, Responses.OK);
    }

    void deregisterPeer(RoutingContext ctx) {
        if (!peers.remove(JsonBinding.bind(ctx, DynamoRequests.Peer.class).url())) {
            throw new HttpError(404, "peer not found");
        }
        Responses.json(ctx, 200, Responses.OK);
    }

    void peers(RoutingContext ctx) {
        peers.all().onComplete(ar -> {
            if (ar.failed()) {
                Responses.error(
                        ctx,
                        new HttpError(
                                503,
                                "cluster membership unavailable: " + ar.cause().getMessage()));
                return;
            }
            Responses.answer(ctx, 200, ar.result());
        });
    }
}
