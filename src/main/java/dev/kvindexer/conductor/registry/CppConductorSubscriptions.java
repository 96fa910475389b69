package dev.kvindexer.conductor.registry;

import dev.kvindexer.conductor.CppConductor;
import dev.kvindexer.conductor.CppConductorRegistration;
import dev.kvindexer.conductor.CppConductorState;
import dev.kvindexer.conductor.wire.CppConductorBatchDecoder;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.zmq.ZmqEndpoint;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ZMQ subscriptions of the C++ Mooncake Conductor's registrations (docs/api/mooncake-cpp.md#post-register, docs/api/mooncake-cpp.md#post-unregister): the conductor decides,
 * then this class opens or closes the registration's subscription, so a refused registration never subscribes and an
 * ended one never feeds the conductor again. Requests for one service key take turns, each from the conductor's
 * decision to its subscription started or stopped, so an unregistration never overtakes the subscription of the
 * registration it ends. Not a {@code registry.Registrar}: its requests, answers and refusals are the C++ Conductor's
 * own.
 */
public final class CppConductorSubscriptions {
    private static final Logger LOG = LoggerFactory.getLogger(CppConductorSubscriptions.class);

    private final CppConductor conductor;
    private final ZmqIngest ingest;
    private final boolean loraIds;
    private final Map<String, Listener> listeners = new ConcurrentHashMap<>();
    /**
     * Service keys whose unregistration is stopping their subscriber. The C++ Conductor refuses a registration of such a
     * key ("service is being unregistered") and a second unregistration of it ("service is already being
     * unregistered"): taken as unchanged, the registration would be undone by the unregistration still under way.
     */
    private final Set<String> unregistering = ConcurrentHashMap.newKeySet();
    /** Per service key, the last request in turn: the next one starts when it has ended. */
    private final Map<String, Future<?>> turns = new ConcurrentHashMap<>();

    /** {@code loraIds}: engine events may carry a lora_id when their lora_name is the registration's. */
    public CppConductorSubscriptions(CppConductor conductor, ZmqIngest ingest, boolean loraIds) {
        this.conductor = conductor;
        this.ingest = ingest;
        this.loraIds = loraIds;
    }

    public CppConductor conductor() {
        return conductor;
    }

    /**
     * What a registration did; a subscription that cannot start fails with {@link SubscribeFailed} and leaves nothing
     * behind. An endpoint no subscriber can use is refused before anything changes, but only after the conflicts the
     * reference checks first.
     */
    public Future<CppConductorState.Registered> register(CppConductorRegistration r) {
        if (unregistering.contains(r.serviceKey())) {
            return Future.succeededFuture(
                    new CppConductorState.Refused("service is being unregistered: " + r.serviceKey()));
        }
        return inTurn(r.serviceKey(), () -> subscribe(r));
    }

    private Future<CppConductorState.Registered> subscribe(CppConductorRegistration r) {
        if (ZmqEndpoint.invalidReason(r.endpoint()) != null) {
            return conductor
                    .decide(r)
                    .compose(outcome -> outcome != null
                            ? Future.succeededFuture(outcome)
                            : Future.failedFuture(new SubscribeFailed(
                                    Refusal.Kind.BAD_REQUEST,
                                    "failed to start ZMQ client: initial connection failed: failed to connect to "
                                            + r.endpoint() + ": Invalid argument")));
        }
        return conductor.register(r).compose(outcome -> {
            if (!(outcome instanceof CppConductorState.Added)) {
                return Future.succeededFuture(outcome);
            }
            CppConductorBatchDecoder decoder = r.engine()
                    ? CppConductorBatchDecoder.forEngine(r.dpRank(), r.blockSize(), r.loraName(), loraIds)
                    : CppConductorBatchDecoder.forStore();
            Listener listener = Listener.forExternal(
                    r.endpoint(), r.dpRank(), new CppConductorStream(r.serviceKey(), decoder, conductor));
            listeners.put(r.serviceKey(), listener);
            LOG.info("conductor registration {} type={} endpoint={}", r.serviceKey(), r.type(), r.endpoint());
            return ingest.start(listener).map(outcome).recover(t -> {
                listeners.remove(r.serviceKey(), listener);
                return conductor
                        .withdraw(r.serviceKey())
                        .transform(ignored -> Future.failedFuture(new SubscribeFailed(
                                t instanceof Refusal refusal ? refusal.kind() : null, t.getMessage())));
            });
        });
    }

    /**
     * The registration that ended, or null when none had that service key; fails with {@link AlreadyUnregistering}
     * while another unregistration of the key is under way.
     */
    public Future<CppConductorRegistration> unregister(String serviceKey) {
        if (!unregistering.add(serviceKey)) {
            return Future.failedFuture(new AlreadyUnregistering(serviceKey));
        }
        return inTurn(serviceKey, () -> {
                    Listener listener = listeners.remove(serviceKey);
                    Future<Void> stopped = listener == null ? Future.succeededFuture() : ingest.stop(listener);
                    return stopped.compose(v -> conductor.unregister(serviceKey));
                })
                .andThen(done -> unregistering.remove(serviceKey));
    }

    /** Runs {@code request} once the key's request before it has ended, however that ended. */
    private <T> Future<T> inTurn(String serviceKey, Supplier<Future<T>> request) {
        Promise<T> ended = Promise.promise();
        Future<?> before = turns.put(serviceKey, ended.future());
        Future<?> after = before == null ? Future.succeededFuture() : before;
        after.onComplete(ignored -> {
            try {
                request.get().onComplete(ended);
            } catch (RuntimeException e) {
                ended.fail(e);
            }
        });
        return ended.future().andThen(done -> turns.remove(serviceKey, ended.future()));
    }

    /** The listener of a registration, for tests that hold its poller. */
    Listener listenerOf(String serviceKey) {
        return listeners.get(serviceKey);
    }

    /** A second unregistration of a service key whose first is still stopping its subscriber. */
    public static final class AlreadyUnregistering extends RuntimeException {
        private static final long serialVersionUID = 1L;

        AlreadyUnregistering(String serviceKey) {
            super("service is already being unregistered: " + serviceKey, null, false, false);
        }
    }

    /**
     * The subscription of a new registration could not start; the registration was undone. The C++ answers every such
     * failure 500 "Failed to subscribe: ...", but an endpoint no subscriber can use is the request's fault, and a full
     * node is no fault of the node's, so the kind tells which it was.
     */
    public static final class SubscribeFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        private final Refusal.Kind kind;

        SubscribeFailed(Refusal.Kind kind, String message) {
            super(message, null, false, false);
            this.kind = kind;
        }

        /** {@code BAD_REQUEST} for an endpoint no subscriber can use, another kind for a refusal, else null. */
        public Refusal.Kind kind() {
            return kind;
        }
    }
}
