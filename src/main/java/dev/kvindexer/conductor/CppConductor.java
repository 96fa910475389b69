package dev.kvindexer.conductor;

import dev.kvindexer.conductor.event.CppConductorEvent;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.ThreadingModel;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's C++ Mooncake Conductor (docs/api/mooncake-cpp.md): one {@link CppConductorState}, reached only through
 * these methods. Changes (registrations, events) run in order on one context under the write lock; a query runs on
 * the thread that received it under the read lock, so queries hash their prompts on every HTTP thread at once and
 * only wait for a change being applied, never for each other.
 */
public final class CppConductor {
    private static final Logger LOG = LoggerFactory.getLogger(CppConductor.class);

    private final Context context;
    private final CppConductorState state = new CppConductorState();
    /**
     * Held for writing by every change, on {@link #context}; for reading by queries, on their own threads. Not a
     * StampedLock: its readers pass a waiting writer, so a steady stream of queries would hold events back for good.
     */
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    private CppConductor(Context context) {
        this.context = context;
    }

    /**
     * Deploys the conductor's home on {@code vertx}: a worker context, so a change waiting for the lock never holds up
     * an event loop.
     */
    public static Future<CppConductor> deploy(Vertx vertx) {
        Home home = new Home();
        return vertx.deployVerticle(home, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER))
                .map(id -> new CppConductor(home.context()));
    }

    /** The verticle that gives the conductor its one ordered context; it holds nothing else. */
    private static final class Home extends VerticleBase {
        Context context() {
            return context;
        }
    }

    public Future<CppConductorState.Registered> register(CppConductorRegistration r) {
        return change(() -> state.register(r));
    }

    /** What registering {@code r} would answer, changing nothing; null when it would be added. */
    public Future<CppConductorState.Registered> decide(CppConductorRegistration r) {
        return call(() -> state.decide(r));
    }

    /** Undoes a registration whose subscription could not start, leaving no trace of it. */
    public Future<Void> withdraw(String serviceKey) {
        return change(() -> {
            state.withdraw(serviceKey);
            return null;
        });
    }

    /** The registration that ended, or null when the service key was not registered. */
    public Future<CppConductorRegistration> unregister(String serviceKey) {
        return change(() -> state.unregister(serviceKey));
    }

    /** Runs on the calling thread: the prompt is hashed there, block by block as the walk asks for it. */
    public Future<CppConductorState.Matches> query(
            CppConductorState.ContextKey key, String instanceId, int[] tokens, String cacheSalt) {
        lock.readLock().lock();
        try {
            return Future.succeededFuture(state.query(key, instanceId, tokens, cacheSalt));
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        } finally {
            lock.readLock().unlock();
        }
    }

    public Future<List<CppConductorRegistration>> services() {
        return call(state::services);
    }

    public Future<List<CppConductorState.ContextView>> contexts() {
        return call(state::contexts);
    }

    /**
     * Applies a decoded batch of a registration, from any thread; {@code taken} runs once it has been applied (the
     * ingest's in-flight bound). A refused event is logged; the others apply.
     */
    public void apply(String serviceKey, List<CppConductorEvent> events, Runnable taken) {
        context.runOnContext(v -> {
            lock.writeLock().lock();
            try {
                for (CppConductorEvent e : events) {
                    String refused = state.apply(serviceKey, e);
                    if (refused != null) {
                        LOG.debug("{}: event skipped: {}", serviceKey, refused);
                    }
                }
            } finally {
                lock.writeLock().unlock();
                taken.run();
            }
        });
    }

    /** {@link #call} under the write lock: the state changes, and no query may read it meanwhile. */
    private <T> Future<T> change(Supplier<T> action) {
        return call(() -> {
            lock.writeLock().lock();
            try {
                return action.get();
            } finally {
                lock.writeLock().unlock();
            }
        });
    }

    /**
     * Runs {@code action} on the conductor's context; the answer comes back on the caller's, which writes it. Only
     * that context changes the state, so what only reads there needs no lock.
     */
    private <T> Future<T> call(Supplier<T> action) {
        Promise<T> done = Promise.promise();
        Context caller = Vertx.currentContext();
        context.runOnContext(v -> {
            T result;
            try {
                result = action.get();
            } catch (RuntimeException e) {
                reply(caller, () -> done.fail(e));
                return;
            }
            reply(caller, () -> done.complete(result));
        });
        return done.future();
    }

    private static void reply(Context caller, Runnable complete) {
        if (caller == null) {
            complete.run();
        } else {
            caller.runOnContext(v -> complete.run());
        }
    }
}
