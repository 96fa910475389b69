package dev.kvindexer.conductor.http;

import dev.kvindexer.conductor.CppConductorRegistration;
import dev.kvindexer.conductor.CppConductorState;
import dev.kvindexer.conductor.registry.CppConductorSubscriptions;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.hash.HashProfile;
import dev.kvindexer.http.MsgpackApi;
import dev.kvindexer.web.HttpError;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The C++ Mooncake Conductor's routes (docs/api/mooncake-cpp.md): msgpack {@code /register}, {@code /unregister} and
 * {@code /query} with its strict checks, and {@code GET /services} and {@code /global_view} in its shapes. Every answer
 * is a msgpack map with {@code Content-Type: application/msgpack}.
 */
public final class CppConductorRoutes implements MsgpackApi {
    private static final Logger LOG = LoggerFactory.getLogger(CppConductorRoutes.class);
    static final String MSGPACK = "application/msgpack";
    private static final CharSequence MSGPACK_HEADER = HttpHeaders.createOptimized(MSGPACK);
    private static final Set<String> ROUTES = Set.of("/query", "/register", "/unregister", "/services", "/global_view");

    private final CppConductorSubscriptions subscriptions;

    public CppConductorRoutes(CppConductorSubscriptions subscriptions) {
        this.subscriptions = subscriptions;
    }

    @Override
    public Set<String> routes() {
        return ROUTES;
    }

    /**
     * The C++ Conductor's 405 for a wrong method on one of its routes ({@code GET /query}, {@code POST /services}):
     * {@code {"error": "Method not allowed"}} in msgpack.
     */
    @Override
    public void methodNotAllowed(RoutingContext ctx) {
        send(
                ctx.response(),
                pack(405, p -> p.packMapHeader(1).packString("error").packString("Method not allowed")));
    }

    @Override
    public void register(RoutingContext ctx) {
        checked(ctx, this::registerChecked);
    }

    @Override
    public void unregister(RoutingContext ctx) {
        checked(ctx, this::unregisterChecked);
    }

    @Override
    public void query(Buffer body, HttpServerResponse response) {
        try {
            queryChecked(body, response);
        } catch (CppConductorError e) {
            error(response, e);
        } catch (RuntimeException e) {
            error(response, internal(e));
        }
    }

    /** Runs a handler whose request checks throw, answering a failed check in the C++ envelope. */
    private static void checked(RoutingContext ctx, Handler<RoutingContext> handler) {
        try {
            handler.handle(ctx);
        } catch (CppConductorError e) {
            error(ctx.response(), e);
        }
    }

    private void registerChecked(RoutingContext ctx) {
        CppConductorRegistration r =
                CppConductorRequests.register(CppConductorBody.read(ctx.body().buffer()));
        answer(ctx.response(), subscriptions.register(r).map(outcome -> {
            if (outcome instanceof CppConductorState.Refused refused) {
                throw CppConductorError.invalid(CppConductorError.INVALID_REGISTRATION, refused.error(), null);
            }
            return pack(200, p -> {
                p.packMapHeader(2);
                p.packString("status").packString("registered successfully");
                p.packString("instance_id").packString(r.instanceId());
            });
        }));
    }

    private void unregisterChecked(RoutingContext ctx) {
        CppConductorRequests.Unregistration u =
                CppConductorRequests.unregister(CppConductorBody.read(ctx.body().buffer()));
        String key = u.serviceKey();
        answer(ctx.response(), subscriptions.unregister(key).map(removed -> {
            if (removed == null) {
                throw CppConductorError.operational(404, "service not found: " + key);
            }
            return pack(200, p -> {
                p.packMapHeader(2);
                p.packString("status").packString("unregistered successfully");
                p.packString("removed_instances").packArrayHeader(1).packString(key);
            });
        }));
    }

    private void queryChecked(Buffer body, HttpServerResponse response) {
        CppConductorRequests.Query q = CppConductorRequests.query(CppConductorBody.read(body));
        if (!q.hashable()) {
            send(response, noInstances());
            return;
        }
        CppConductorState.ContextKey key =
                new CppConductorState.ContextKey(q.tenantId(), q.model(), q.loraName(), q.blockSize());
        answer(
                response,
                subscriptions
                        .conductor()
                        .query(key, q.instanceId(), q.tokens(), q.cacheSalt())
                        .map(m -> new Reply(200, CppQueryAnswer.of(m, q.blockSize()))));
    }

    @Override
    public void services(RoutingContext ctx) {
        answer(
                ctx.response(),
                subscriptions
                        .conductor()
                        .services()
                        .map(all -> pack(200, p -> {
                            p.packMapHeader(2);
                            p.packString("count").packInt(all.size());
                            p.packString("services").packArrayHeader(all.size());
                            for (CppConductorRegistration r : all) {
                                p.packMapHeader(11);
                                p.packString("Endpoint").packString(r.endpoint());
                                p.packString("ReplayEndpoint").packString(r.replayEndpoint());
                                p.packString("Type").packString(r.type());
                                p.packString("ModelName").packString(r.modelName());
                                p.packString("LoraName").packString(r.loraName());
                                p.packString("TenantID").packString(r.tenantId());
                                p.packString("InstanceID").packString(r.instanceId());
                                p.packString("BlockSize").packLong(r.blockSize());
                                p.packString("DPRank").packInt(r.dpRank());
                                p.packString("CacheGroup");
                                if (r.cacheGroup() == null) {
                                    p.packNil();
                                } else {
                                    p.packInt(r.cacheGroup());
                                }
                                p.packString("HashProfile");
                                profile(p, r.profile());
                            }
                        })));
    }

    @Override
    public Future<List<ServiceRow>> serviceRows() {
        return subscriptions
                .conductor()
                .services()
                .map(all -> all.stream()
                        .map(r -> new ServiceRow(
                                r.endpoint(),
                                r.replayEndpoint(),
                                r.type(),
                                r.modelName(),
                                r.loraName(),
                                r.tenantId(),
                                r.instanceId(),
                                r.blockSize(),
                                r.dpRank(),
                                null))
                        .toList());
    }

    @Override
    public void globalView(RoutingContext ctx) {
        answer(
                ctx.response(),
                subscriptions
                        .conductor()
                        .contexts()
                        .map(all -> pack(200, p -> {
                            p.packMapHeader(2);
                            p.packString("context_count").packInt(all.size());
                            p.packString("contexts").packArrayHeader(all.size());
                            for (CppConductorState.ContextView c : all) {
                                p.packMapHeader(7);
                                p.packString("model_name").packString(c.key().model());
                                p.packString("lora_name").packString(c.key().lora());
                                p.packString("block_size").packLong(c.key().blockSize());
                                p.packString("tenant_id").packString(c.key().tenantId());
                                p.packString("prefix_count").packInt(c.prefixCount());
                                p.packString("hash_profile");
                                profile(p, c.profile());
                                p.packString("instances")
                                        .packMapHeader(c.instances().size());
                                for (Map.Entry<String, List<Integer>> e :
                                        c.instances().entrySet()) {
                                    p.packString(e.getKey())
                                            .packArrayHeader(e.getValue().size());
                                    for (int rank : e.getValue()) {
                                        p.packInt(rank);
                                    }
                                }
                            }
                        })));
    }

    private static void profile(MessagePacker p, HashProfile profile) throws IOException {
        p.packMapHeader(5);
        p.packString("strategy").packString(HashProfile.STRATEGY);
        p.packString("algorithm").packString(profile.algorithm().wireName());
        p.packString("python_hash_seed").packString(profile.pythonHashSeed());
        p.packString("root_digest").packString(profile.rootDigestHex());
        p.packString("index_projection").packString(HashProfile.INDEX_PROJECTION);
    }

    private static Reply noInstances() {
        return pack(200, p -> p.packMapHeader(1).packString("instances").packMapHeader(0));
    }

    /** The error in the C++ envelope. */
    private static void error(HttpServerResponse response, CppConductorError e) {
        send(response, pack(e.status(), p -> {
            int members = 1 + (e.reason() != null ? 1 : 0) + (e.field() != null ? 1 : 0) + (e.index() >= 0 ? 1 : 0);
            p.packMapHeader(members);
            p.packString("error").packString(e.getMessage());
            if (e.reason() != null) {
                p.packString("reason").packString(e.reason());
            }
            if (e.field() != null) {
                p.packString("field").packString(e.field());
            }
            if (e.index() >= 0) {
                p.packString("index").packLong(e.index());
            }
        }));
    }

    private record Reply(int status, Buffer body) {}

    @FunctionalInterface
    private interface Packing {
        void write(MessageBufferPacker p) throws IOException;
    }

    /** Answers are a few hundred bytes; the default packer starts every one with an 8 KiB buffer. */
    private static final MessagePack.PackerConfig ANSWER_PACKER = MessagePack.DEFAULT_PACKER_CONFIG.withBufferSize(512);

    private static Reply pack(int status, Packing packing) {
        try (MessageBufferPacker p = ANSWER_PACKER.newBufferPacker()) {
            packing.write(p);
            return new Reply(status, Buffer.buffer(p.toByteArray()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void answer(HttpServerResponse response, Future<Reply> reply) {
        reply.onComplete(ar -> {
            if (ar.succeeded()) {
                send(response, ar.result());
            } else if (ar.cause() instanceof CppConductorError e) {
                error(response, e);
            } else if (ar.cause() instanceof CppConductorSubscriptions.SubscribeFailed f) {
                error(response, subscribeFailed(f));
            } else if (ar.cause() instanceof CppConductorSubscriptions.AlreadyUnregistering a) {
                error(response, CppConductorError.operational(404, a.getMessage()));
            } else {
                error(response, internal(ar.cause()));
            }
        });
    }

    /** A failure no check foresaw: the C++ envelope's 500, and the cause logged for whoever runs the node. */
    private static CppConductorError internal(Throwable cause) {
        LOG.error("C++ Conductor request failed", cause);
        return CppConductorError.operational(500, "internal error: " + cause);
    }

    /**
     * A registration whose subscription could not start. An endpoint no subscriber can use (the C++ reports it as a
     * ZMQ "Invalid argument") is the client's error: 400 in the envelope of the other registration refusals, naming
     * the field, rather than the reference's 500. A refusal (the node's listener limit) answers its own status.
     */
    private static CppConductorError subscribeFailed(CppConductorSubscriptions.SubscribeFailed f) {
        String text = "Failed to subscribe: " + f.getMessage();
        if (f.kind() == null) {
            return CppConductorError.operational(500, text);
        }
        if (f.kind() == Refusal.Kind.BAD_REQUEST) {
            return CppConductorError.invalid(CppConductorError.INVALID_REGISTRATION, text, "endpoint");
        }
        return CppConductorError.operational(HttpError.status(f.kind()), text);
    }

    private static void send(HttpServerResponse response, Reply reply) {
        if (response.ended() || response.closed()) {
            return;
        }
        response.setStatusCode(reply.status())
                .putHeader(HttpHeaders.CONTENT_TYPE, MSGPACK_HEADER)
                .end(reply.body());
    }
}
