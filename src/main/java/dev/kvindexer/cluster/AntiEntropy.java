package dev.kvindexer.cluster;

import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.HazelcastInstance;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * When a node reconciles in full with the cluster: on every membership change (a member that left may have taken map
 * entries with it; one that joined may have missed announcements) and every period (for anything else missed). Runs
 * never overlap; a trigger during a run starts one more run after it, since the run may have read the map too early.
 */
public final class AntiEntropy {
    private final Vertx vertx;
    private final HazelcastInstance hazelcast;
    private final Duration period;
    private final Supplier<Future<Void>> reconcile;
    private boolean running;
    private boolean again;
    private long timer = -1;
    private UUID listener;

    /** @param reconcile one full reconcile; must not fail */
    public AntiEntropy(Vertx vertx, HazelcastInstance hazelcast, Duration period, Supplier<Future<Void>> reconcile) {
        this.vertx = vertx;
        this.hazelcast = hazelcast;
        this.period = period;
        this.reconcile = reconcile;
    }

    public synchronized void start() {
        timer = vertx.setPeriodic(period.toMillis(), id -> trigger());
        // Hazelcast calls this on its own threads; the reconcile starts on a Vert.x context like every other one.
        listener = hazelcast.getCluster().addMembershipListener(new MembershipListener() {
            @Override
            public void memberAdded(MembershipEvent event) {
                vertx.runOnContext(v -> trigger());
            }

            @Override
            public void memberRemoved(MembershipEvent event) {
                vertx.runOnContext(v -> trigger());
            }
        });
    }

    public synchronized void stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
            timer = -1;
        }
        if (listener != null) {
            try {
                hazelcast.getCluster().removeMembershipListener(listener);
            } catch (RuntimeException memberAlreadyGone) {
                // Shutting down either way; a member that stopped has no listeners left.
            }
            listener = null;
        }
    }

    private synchronized void trigger() {
        if (running) {
            again = true;
            return;
        }
        running = true;
        reconcile.get().onComplete(done -> finished());
    }

    private synchronized void finished() {
        running = false;
        if (again && timer >= 0) {
            again = false;
            trigger();
        }
    }
}
