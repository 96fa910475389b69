package dev.kvindexer.registry;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.ListenerState;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.partition.PartitionHost;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.StreamSpec;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out registrations: the {@link Registry} decides, this class deploys partition actors, opens and
 * closes their streams and starts and stops listeners, in an order that never lets a batch of an
 * unregistered stream reach the index.
 */
public final class LocalRegistrar implements Registrar {
    private static final Logger LOG = LoggerFactory.getLogger(LocalRegistrar.class);
    private final Registry registry;
    private final PartitionHost host;
    private final ZmqIngest ingest;
    private final ShardFilter shards;
    /**
     * While a node joins a sharded cluster, the registrations it reads already have a history elsewhere: their
     * listeners start remote here, and a hand-over installs that history before listening ({@link #takeOver}).
     */
    private volatile boolean deferHeldShards;

    /** {@code host} must be the one {@code registry} allocates its partitions from. */
    public LocalRegistrar(Registry registry, PartitionHost host, ZmqIngest ingest) {
        this(registry, host, ingest, ShardFilter.EVERYTHING);
    }

    /** Runs listeners only for the instances {@code shards} places on this node; the others are registered remote. */
    public LocalRegistrar(Registry registry, PartitionHost host, ZmqIngest ingest, ShardFilter shards) {
        this.registry = registry;
        this.host = host;
        this.ingest = ingest;
        this.shards = shards;
    }

    public Registry registry() {
        return registry;
    }

    /**
     * Registers and starts the listener; fails with a {@link Refusal}: a conflict, or {@code FULL} when the node runs
     * as many listeners as it may (too many for this node now, fine once some go).
     */
    @Override
    public Future<Void> register(RegisterRequest request) {
        Registry.Registration reg;
        try {
            reg = registry.register(request);
        } catch (Refusal e) {
            return Future.failedFuture(e);
        }
        PartitionRef partition = reg.partition();
        Listener listener = reg.listener();
        if (reg.createdPartition()) {
            deploy(partition);
        }
        LOG.info(
                "registered {} model={} tenant={}",
                listener,
                partition.key().modelName(),
                partition.key().routingGroup());
        return start(partition, listener).recover(t -> {
            // Never leave a registration behind that can only ever show "pending" or "failed".
            if (t instanceof Refusal) {
                LOG.warn("registration of {} refused: {}", listener, t.getMessage());
            } else {
                LOG.error("registration of {} failed; rolled back", listener, t);
            }
            return unregister(
                            request.workerId(),
                            request.partition().modelName(),
                            request.partition().routingGroup(),
                            request.dpRank())
                    .transform(ignored -> Future.failedFuture(t));
        });
    }

    /** Opens the listener's generation in its partition, then its socket, so no batch precedes its stream. */
    private Future<Void> start(PartitionRef partition, Listener listener) {
        return start(partition, listener, false, false);
    }

    /**
     * As above; {@code replayHistory} asks the engine for the stream's whole history at once (StreamSpec), and
     * {@code anyShard} starts it whether or not this node holds its shard.
     */
    private Future<Void> start(PartitionRef partition, Listener listener, boolean replayHistory, boolean anyShard) {
        if (deferHeldShards
                || (!anyShard
                        && !shards.holdsHere(
                                partition.key(),
                                listener.workerId(),
                                listener.publisher().isStore()))) {
            listener.markRemote();
            return Future.succeededFuture();
        }
        return partition
                .openStream(new StreamSpec(
                        listener.workerId(),
                        listener.dpRank(),
                        listener.generation(),
                        listener.replayEndpoint(),
                        listener.publisher().defaultLora(),
                        listener.publisher().isStore(),
                        replayHistory))
                .compose(v -> ingest.start(listener));
    }

    /** The partition a peer's dump fills, deployed; fails when it exists here with another block size. */
    public Future<PartitionRef> ensurePartition(PartitionKey key, int blockSize) {
        Registry.Registration reg;
        try {
            reg = registry.ensurePartition(key, blockSize);
        } catch (Refusal full) {
            return Future.failedFuture(full);
        }
        if (reg == null) {
            return Future.failedFuture(
                    Refusal.conflict("block_size mismatch for " + Registry.describe(key) + ": dump has " + blockSize));
        }
        if (reg.createdPartition()) {
            deploy(reg.partition());
        }
        return reg.partition().ready().map(v -> reg.partition());
    }

    /** Test endpoint: stops consuming; events published meanwhile are missed and come back through replay. */
    public Future<Void> pause(long workerId, int dpRank) {
        try {
            Listener l = registry.pause(workerId, dpRank);
            LOG.info("paused {}", l);
            return ingest.stop(l);
        } catch (Refusal e) {
            return Future.failedFuture(e);
        }
    }

    /** Test endpoint: a new listener generation, pending until connected. */
    public Future<Void> resume(long workerId, int dpRank) {
        try {
            Registry.Resumption r = registry.resume(workerId, dpRank);
            LOG.info("resuming {}", r.next());
            return ingest.stop(r.previous()).compose(v -> start(r.partition(), r.next()));
        } catch (Refusal e) {
            return Future.failedFuture(e);
        }
    }

    private void deploy(PartitionRef partition) {
        host.start(partition);
        LOG.info(
                "partition created model={} tenant={} block_size={}",
                partition.key().modelName(),
                partition.key().routingGroup(),
                partition.blockSize());
    }

    /** Unregisters per docs/api/dynamo.md#post-unregister; fails with {@link Refusal} when nothing matches. */
    @Override
    public Future<Void> unregister(long workerId, String modelName, String routingGroup, Integer dpRank) {
        Registry.Unregistration u;
        try {
            u = registry.unregister(workerId, modelName, routingGroup, dpRank);
        } catch (Refusal e) {
            return Future.failedFuture(e);
        }
        PartitionRef partition = u.partition();
        List<Future<Void>> stops = new ArrayList<>();
        for (Listener l : u.listeners()) {
            stops.add(ingest.stop(l));
            LOG.info("unregistered {}", l);
        }
        return Future.all(stops)
                .compose(v -> partition.removeStreams(u.workerId(), u.dpRank(), u.lastOfWorker()))
                .compose(v -> u.partitionRemoved() ? undeploy(partition) : Future.succeededFuture());
    }

    private Future<Void> undeploy(PartitionRef partition) {
        LOG.info(
                "partition removed model={} tenant={}",
                partition.key().modelName(),
                partition.key().routingGroup());
        return host.stop(partition);
    }

    /** See {@link #deferHeldShards}: on while the node reads the cluster's registrations as it joins. */
    public void deferHeldShards(boolean defer) {
        deferHeldShards = defer;
    }

    /**
     * Takes over an instance whose listeners are remote here, without loss: its listeners start held (subscribed,
     * buffering), {@code install} then puts its history into the partition (a snapshot taken after the
     * subscriptions, with its streams' watermarks), and only then do the buffered batches flow: those the snapshot
     * covers are dropped as stale, the rest apply, and a gap is replayed. If {@code install} fails the instance is
     * remote again.
     */
    public Future<Void> takeOver(List<Listener> remote, Function<PartitionRef, Future<Void>> install) {
        return takeOver(remote, false, install);
    }

    /**
     * As {@link #takeOver}, whether or not this node holds the instance's shard: a cold start restores history that
     * only this node's data directory has, and the hand-over lets go of it once the shard's holders have it.
     */
    public Future<Void> restore(List<Listener> remote, Function<PartitionRef, Future<Void>> install) {
        return takeOver(remote, true, install);
    }

    private Future<Void> takeOver(
            List<Listener> remote, boolean anyShard, Function<PartitionRef, Future<Void>> install) {
        PartitionRef partition = remote.get(0).partition();
        return restart(
                remote,
                true,
                anyShard,
                started -> install.apply(partition).onSuccess(v -> started.forEach(ingest::release)));
    }

    /**
     * Subscribes an instance whose listeners are remote here and that no node serves any more, and asks its engine at
     * once to replay each stream's history (from seq 0 when this node holds nothing of it), as a first registration
     * would on its first live batch. If a listener cannot start, the instance is remote again and the next pass tries.
     */
    public Future<Void> rebuild(List<Listener> remote) {
        return restart(remote, false, false, started -> Future.succeededFuture());
    }

    /**
     * Starts a new generation of each remote listener ({@code held}: buffering until released; otherwise asking its
     * engine for its history at once; {@code anyShard}: even where this node does not hold the shard), then runs
     * {@code then} on those started; if anything fails, they are remote again.
     */
    private Future<Void> restart(
            List<Listener> remote, boolean held, boolean anyShard, Function<List<Listener>, Future<Void>> then) {
        PartitionRef partition = remote.get(0).partition();
        List<Listener> started = new ArrayList<>();
        List<Future<Void>> starts = new ArrayList<>();
        for (Listener l : remote) {
            Listener next = registry.restartRemote(l);
            if (next != null) {
                if (held) {
                    next.hold();
                }
                started.add(next);
                starts.add(start(partition, next, !held, anyShard));
            }
        }
        return Future.all(starts)
                .compose(v -> {
                    // start() leaves a listener remote when the placement moved away since the pass chose to take
                    // the instance: nothing was opened for it, so nothing may be installed (the blocks would stay as
                    // those of an instance not served here, and a later take-over would add its copy to them).
                    if (started.isEmpty() || started.stream().anyMatch(l -> l.state() == ListenerState.REMOTE)) {
                        return Future.failedFuture(new IllegalStateException("instance "
                                + Long.toUnsignedString(remote.get(0).workerId())
                                + " is no longer to be started here (its shard moved, or it was replaced)"));
                    }
                    return then.apply(started);
                })
                .recover(t -> (started.isEmpty() ? Future.<Void>succeededFuture() : letGo(started))
                        .transform(ignored -> Future.failedFuture(t)));
    }

    /** Stops an instance's listeners and drops its blocks: other nodes hold its shard now. */
    public Future<Void> letGo(List<Listener> listeners) {
        Listener first = listeners.get(0);
        List<Future<Void>> stops = new ArrayList<>();
        for (Listener l : listeners) {
            Listener remote = registry.toRemote(l);
            if (remote != null) {
                stops.add(ingest.stop(l));
            }
        }
        return Future.all(stops).compose(v -> first.partition().removeStreams(first.workerId(), -1, true));
    }

    /** Stops every listener (shutdown). */
    public Future<Void> stopAll() {
        List<Future<Void>> stops = new ArrayList<>();
        for (Listener l : registry.listeners()) {
            stops.add(ingest.stop(l));
        }
        return Future.all(stops).mapEmpty();
    }
}
