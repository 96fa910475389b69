package dev.kvindexer.conductor;

import dev.kvindexer.event.ConductorEvent;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's C++ Mooncake Conductor (SPEC §11): one {@link ConductorState} on one event loop, reached only through
 * these methods, each of which runs there. HTTP handlers and ingest threads call it alike.
 */
public final class Conductor {
    private static final Logger LOG = LoggerFactory.getLogger(Conductor.class);

    private final Context context;
    private final ConductorState state = new ConductorState();

    private Conductor(Context context) {
        this.context = context;
    }

    /** Deploys the conductor's event-loop home on {@code vertx}. */
    public static Future<Conductor> deploy(Vertx vertx) {
        Home home = new Home();
        return vertx.deployVerticle(home).map(id -> new Conductor(home.context()));
    }

    /** The verticle that gives the conductor its event loop; it holds nothing else. */
    private static final class Home extends VerticleBase {
        Context context() {
            return context;
        }
    }

    public Future<ConductorState.Registered> register(ConductorRegistration r) {
        return call(() -> state.register(r));
    }

    /** The registration that ended, or null when the service key was not registered. */
    public Future<ConductorRegistration> unregister(String serviceKey) {
        return call(() -> state.unregister(serviceKey));
    }

    public Future<ConductorState.Matches> query(ConductorState.ContextKey key, String instanceId, int[] tokens,
                                                String cacheSalt) {
        return call(() -> state.query(key, instanceId, tokens, cacheSalt));
    }

    public Future<List<ConductorRegistration>> services() {
        return call(state::services);
    }

    public Future<List<ConductorState.ContextView>> contexts() {
        return call(state::contexts);
    }

    /**
     * Applies a decoded batch of a registration, from any thread; {@code taken} runs once it has been applied (the
     * ingest's in-flight bound). A refused event is logged; the others apply.
     */
    public void apply(String serviceKey, List<ConductorEvent> events, Runnable taken) {
        context.runOnContext(v -> {
            try {
                for (ConductorEvent e : events) {
                    String refused = state.apply(serviceKey, e);
                    if (refused != null) {
                        LOG.debug("{}: event skipped: {}", serviceKey, refused);
                    }
                }
            } finally {
                taken.run();
            }
        });
    }

    private <T> Future<T> call(Supplier<T> action) {
        Promise<T> done = Promise.promise();
        context.runOnContext(v -> {
            try {
                done.complete(action.get());
            } catch (RuntimeException e) {
                done.fail(e);
            }
        });
        return done.future();
    }
}
