package dev.kvindexer.partition;

import dev.kvindexer.config.InexactStreamPolicy;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.metrics.EventCounters;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/** Runs this node's partition actors: allocates their handles, deploys and undeploys them. */
public final class PartitionHost {
    private final Vertx vertx;
    private final EventCounters counters;
    private final Watermarks watermarks;
    private final Consumer<ReplayRequest> replays;
    private final Consumer<RepairRequest> repairs;
    private final InFlightBatches inFlight;
    private final MemoryBudget budget;
    private final AtomicLong incarnations = new AtomicLong();
    /** Where partitions are deployed from: a context of no deployment, made where the host is built (not a verticle). */
    private final Context home;

    private final InexactStreamPolicy inexactPolicy;

    /**
     * @param replays  where a partition asks for a stream's missed batches to be fetched from its engine
     * @param inFlight the bound on live batches sent and not yet taken, shared with ingest
     */
    public PartitionHost(
            Vertx vertx,
            EventCounters counters,
            Watermarks watermarks,
            Consumer<ReplayRequest> replays,
            InFlightBatches inFlight) {
        this(
                vertx,
                counters,
                watermarks,
                replays,
                inFlight,
                MemoryBudget.UNLIMITED,
                InexactStreamPolicy.KEEP,
                repair -> {});
    }

    /**
     * @param budget        the heap this node's indexes may hold together
     * @param inexactPolicy what becomes of a stream's blocks when batches of it are lost for good
     * @param repairs       where a stream that lost batches for good asks for a peer's copy of them
     */
    public PartitionHost(
            Vertx vertx,
            EventCounters counters,
            Watermarks watermarks,
            Consumer<ReplayRequest> replays,
            InFlightBatches inFlight,
            MemoryBudget budget,
            InexactStreamPolicy inexactPolicy,
            Consumer<RepairRequest> repairs) {
        this.inexactPolicy = inexactPolicy;
        this.repairs = repairs;
        this.budget = budget;
        this.vertx = vertx;
        this.counters = counters;
        this.watermarks = watermarks;
        this.replays = replays;
        this.inFlight = inFlight;
        this.home = vertx.getOrCreateContext();
    }

    /**
     * Why a node with {@code partitions} partitions may not create another, or null: the memory budget cannot hold
     * its fixed cost ({@link MemoryBudget#refuseNewPartition}).
     */
    public String refuseNewPartition(int partitions) {
        return budget.refuseNewPartition(partitions);
    }

    /** A handle on a new partition, not started: no I/O, so a registry can allocate under its lock. */
    public PartitionRef allocate(PartitionKey key, int blockSize) {
        return new LocalPartition(key, blockSize, incarnations.getAndIncrement(), vertx, inFlight);
    }

    /**
     * Deploys the partition's actor; the handle's {@link PartitionRef#ready()} completes with it. The deployment is
     * made from the host's own context, not the caller's: Vert.x makes a verticle deployed from another verticle's
     * context that verticle's child, and a partition created while an HTTP verticle answered a registration would
     * otherwise end when that verticle is undeployed.
     */
    public Future<Void> start(PartitionRef ref) {
        LocalPartition p = local(ref);
        home.runOnContext(ignored -> {
            try {
                vertx.deployVerticle(
                                new PartitionVerticle(p, counters, watermarks, replays, budget, inexactPolicy, repairs))
                        .onComplete(ar -> {
                            if (ar.succeeded()) {
                                p.deployed(ar.result());
                            } else {
                                p.deployFailed(ar.cause());
                            }
                        });
            } catch (RuntimeException e) {
                p.deployFailed(e);
            }
        });
        return p.ready();
    }

    /** Undeploys the partition's actor once it was deployed; later requests fail with {@link PartitionGoneException}. */
    public Future<Void> stop(PartitionRef ref) {
        LocalPartition p = local(ref);
        return p.ready().compose(v -> vertx.undeploy(p.deploymentId()));
    }

    private static LocalPartition local(PartitionRef ref) {
        if (ref instanceof LocalPartition p) {
            return p;
        }
        if (ref instanceof PartitionView view) {
            return local(view.hosted());
        }
        throw new IllegalArgumentException(ref + " is not hosted on this node");
    }
}
