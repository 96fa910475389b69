package dev.kvindexer.registry;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.ListenerState;
import dev.kvindexer.partition.PartitionHost;
import dev.kvindexer.partition.PartitionRef;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * Which byId and listeners are registered in which partition, with the reference's conflict rules
 * (docs/api/dynamo.md#post-register, docs/api/dynamo.md#post-unregister). Pure state with no I/O: {@link LocalRegistrar} performs the side effects.
 * Registrations are rare, so one lock keeps the rules simple and atomic.
 */
public final class Registry {
    /** Written under the registry's lock, read without it: every query looks its partition up here. */
    private final Map<PartitionKey, PartitionRef> partitions = new java.util.concurrent.ConcurrentHashMap<>();

    private final Map<PartitionKey, List<Long>> partitionInstances = new HashMap<>();
    private final Map<Long, Worker> byId = new HashMap<>();
    private final PartitionHost host;
    private final UnaryOperator<PartitionRef> view;
    private long nextGeneration;
    /** Counts changes to the set of registered instances; {@link #instances} is rebuilt when it moved. */
    private long instancesVersion;

    private Instances instances = new Instances(0, List.of());

    /** {@code host} allocates the handle of every partition a registration creates. */
    public Registry(PartitionHost host) {
        this(host, UnaryOperator.identity());
    }

    /** Callers get {@code view} of each partition {@code host} allocates (a sharded cluster's scatter). */
    public Registry(PartitionHost host, UnaryOperator<PartitionRef> view) {
        this.host = host;
        this.view = view;
    }

    private static final class Worker {
        final long id;
        final PartitionKey key;
        /** The Mooncake string id, or null for a numeric id. */
        final String name;

        final TreeMap<Integer, Listener> listeners = new TreeMap<>();
        /**
         * Served here with none of its past: registered at a cold start whose snapshot had nothing of it, or taken
         * from a node that had nothing either. Another node's copy with history is worth more than this one.
         */
        boolean withoutHistory;

        Worker(long id, PartitionKey key, String name) {
            this.id = id;
            this.key = key;
            this.name = name;
        }
    }

    /** What a successful registration created. */
    public record Registration(PartitionRef partition, boolean createdPartition, Listener listener) {}

    /**
     * What an unregistration removed: the listeners, and the streams whose blocks go, one rank ({@code dpRank >= 0})
     * or the whole worker ({@code dpRank < 0} or {@code lastOfWorker}).
     */
    public record Unregistration(
            PartitionRef partition,
            List<Listener> listeners,
            long workerId,
            int dpRank,
            boolean lastOfWorker,
            boolean partitionRemoved) {
        public boolean wholeWorker() {
            return dpRank < 0 || lastOfWorker;
        }
    }

    /** A registered instance for /workers: its listeners ordered by dp_rank; {@code name} is its Mooncake string id. */
    public record WorkerView(long workerId, String name, PartitionKey key, int blockSize, List<Listener> listeners) {
        /** The URL a router knows the instance by, as its last registered rank gave it, or null. */
        public String workerAddress() {
            String address = null;
            for (Listener l : listeners) {
                if (l.publisher().workerAddress() != null) {
                    address = l.publisher().workerAddress();
                }
            }
            return address;
        }
    }

    /** A registered instance as shard placement sees it; a Mooncake Store is held by every node. */
    public record Instance(PartitionKey key, long workerId, boolean store) {}

    /** Every registered instance, and a version that moves whenever the set changes. */
    public record Instances(long version, List<Instance> all) {}

    /** An instance of a partition with its registered ranks, for responses that list every instance. */
    public record Member(long workerId, String name, boolean store, int[] dpRanks) {}

    public synchronized Registration register(RegisterRequest r) {
        checkRegister(r);
        Worker worker = byId.get(r.workerId());
        PartitionRef partition = partitions.get(r.partition());
        boolean created = partition == null;
        if (created) {
            partition = view.apply(host.allocate(r.partition(), r.blockSize()));
            partitions.put(r.partition(), partition);
            partitionInstances.put(r.partition(), new ArrayList<>());
        }
        if (worker == null) {
            worker = new Worker(r.workerId(), r.partition(), r.publisher().name());
            byId.put(r.workerId(), worker);
            instancesVersion++;
            partitionInstances.get(r.partition()).add(r.workerId());
        }
        Listener listener = new Listener(
                r.workerId(), r.dpRank(), r.endpoint(), r.replayEndpoint(), partition, nextGeneration++, r.publisher());
        worker.listeners.put(r.dpRank(), listener);
        return new Registration(partition, created, listener);
    }

    /** Throws what {@link #register} would refuse {@code r} with, changing nothing. */
    public synchronized void checkRegister(RegisterRequest r) {
        if (r.dpRank() < 0 || r.dpRank() > EventBatch.MAX_RANK) {
            throw Refusal.invalid("`dp_rank`: " + Integer.toUnsignedString(r.dpRank()) + " is over "
                    + EventBatch.MAX_RANK + ", the largest rank the index holds");
        }
        String id = Long.toUnsignedString(r.workerId());
        Worker worker = byId.get(r.workerId());
        if (worker != null && !Objects.equals(worker.name, r.publisher().name())) {
            throw Refusal.conflict("instance id collision: `"
                    + InstanceIds.display(r.workerId(), r.publisher().name()) + "` and `"
                    + InstanceIds.display(worker.id, worker.name) + "` map to the same id");
        }
        if (worker != null && !worker.key.equals(r.partition())) {
            throw Refusal.conflict("instance " + id + " is already registered for " + describe(worker.key));
        }
        if (worker != null && worker.listeners.containsKey(r.dpRank())) {
            throw duplicate(r.workerId(), r.dpRank());
        }
        PartitionRef partition = partitions.get(r.partition());
        if (partition == null) {
            refuseIfFull();
        }
        if (partition != null && partition.blockSize() != r.blockSize()) {
            throw Refusal.conflict("block_size mismatch for " + describe(r.partition()) + ": existing="
                    + partition.blockSize() + ", requested=" + r.blockSize());
        }
    }

    /**
     * Whether (instance, dp_rank) is registered already exactly as {@code r} asks: the same publisher, replay
     * endpoint, partition and block size (in a cluster, another replica's selection service registered the worker).
     */
    public synchronized boolean registeredAs(RegisterRequest r) {
        Worker worker = byId.get(r.workerId());
        Listener l = worker == null ? null : worker.listeners.get(r.dpRank());
        return l != null
                && worker.key.equals(r.partition())
                && Objects.equals(worker.name, r.publisher().name())
                && l.endpoint().equals(r.endpoint())
                && Objects.equals(l.replayEndpoint(), r.replayEndpoint())
                && l.blockSize() == r.blockSize();
    }

    /** The reference's answer to registering a (instance, dp_rank) twice. */
    public static Refusal duplicate(long workerId, int dpRank) {
        return Refusal.conflict(
                "instance " + Long.toUnsignedString(workerId) + " dp_rank " + dpRank + " already registered");
    }

    /**
     * The dp_ranks {@link #unregister} would remove, or what it would refuse with; changes nothing. A null
     * {@code modelName} matches any model (Mooncake keys registrations by instance, tenant and rank only).
     */
    public synchronized List<Integer> ranksToUnregister(
            long workerId, String modelName, String routingGroup, Integer dpRank) {
        Worker worker = matchingInstance(workerId, modelName, routingGroup);
        if (dpRank == null) {
            return new ArrayList<>(worker.listeners.keySet());
        }
        if (!worker.listeners.containsKey(dpRank)) {
            throw rankNotFound(workerId, dpRank);
        }
        return List.of(dpRank);
    }

    private Worker matchingInstance(long workerId, String modelName, String routingGroup) {
        String id = Long.toUnsignedString(workerId);
        Worker worker = byId.get(workerId);
        if (worker == null) {
            throw Refusal.notFound("instance " + id + " not found");
        }
        if ((modelName != null && !worker.key.modelName().equals(modelName))
                || (routingGroup != null && !worker.key.routingGroup().equals(routingGroup))) {
            throw Refusal.notFound("instance " + id + " is registered for " + describe(worker.key));
        }
        return worker;
    }

    private static Refusal rankNotFound(long workerId, int dpRank) {
        return Refusal.notFound("instance " + Long.toUnsignedString(workerId) + " dp_rank " + dpRank + " not found");
    }

    /**
     * Unregisters per docs/api/dynamo.md#post-unregister. {@code routingGroup} null means any group of the model; {@code dpRank} null means
     * every rank of the instance.
     */
    public synchronized Unregistration unregister(
            long workerId, String modelName, String routingGroup, Integer dpRank) {
        Worker worker = matchingInstance(workerId, modelName, routingGroup);
        PartitionRef partition = partitions.get(worker.key);
        List<Listener> removed;
        if (dpRank == null) {
            removed = new ArrayList<>(worker.listeners.values());
            worker.listeners.clear();
        } else {
            Listener l = worker.listeners.remove(dpRank);
            if (l == null) {
                throw rankNotFound(workerId, dpRank);
            }
            removed = List.of(l);
        }
        boolean lastOfWorker = worker.listeners.isEmpty();
        boolean partitionRemoved = false;
        if (worker.listeners.isEmpty()) {
            byId.remove(workerId);
            instancesVersion++;
            List<Long> members = partitionInstances.get(worker.key);
            members.remove(Long.valueOf(workerId));
            if (members.isEmpty()) {
                partitions.remove(worker.key);
                partitionInstances.remove(worker.key);
                partitionRemoved = true;
            }
        }
        return new Unregistration(
                partition, removed, workerId, dpRank == null ? -1 : dpRank, lastOfWorker, partitionRemoved);
    }

    /**
     * The partition for a peer's dump: created when absent (with no workers yet). Null when it exists with another
     * block size, whose blocks could never match here.
     */
    public synchronized Registration ensurePartition(PartitionKey key, int blockSize) {
        PartitionRef p = partitions.get(key);
        if (p != null) {
            return p.blockSize() == blockSize ? new Registration(p, false, null) : null;
        }
        refuseIfFull();
        p = view.apply(host.allocate(key, blockSize));
        partitions.put(key, p);
        partitionInstances.put(key, new ArrayList<>());
        return new Registration(p, true, null);
    }

    /**
     * Refuses a new partition the node's memory budget cannot hold: 429, as every refusal for want of room (listeners,
     * bookings), which a client may try again once something has gone.
     */
    private void refuseIfFull() {
        String full = host.refuseNewPartition(partitions.size());
        if (full != null) {
            throw Refusal.full(full);
        }
    }

    /** The current listener of (instance, dp_rank), or null. */
    public synchronized Listener listener(long workerId, int dpRank) {
        Worker worker = byId.get(workerId);
        return worker == null ? null : worker.listeners.get(dpRank);
    }

    /** Pauses a pending or active listener (test endpoint); returns it so its socket can be closed. */
    public synchronized Listener pause(long workerId, int dpRank) {
        Listener l = existing(workerId, dpRank);
        ListenerState before = l.pause();
        if (!before.pausable()) {
            throw Refusal.conflict("instance " + Long.toUnsignedString(workerId) + " dp_rank " + dpRank
                    + " cannot be paused from status " + before.jsonName());
        }
        return l;
    }

    /** What a resume replaced: the old listener and its new generation, pending. */
    public record Resumption(PartitionRef partition, Listener previous, Listener next) {}

    /** Starts a new listener generation for a paused or failed listener (test endpoint). */
    public synchronized Resumption resume(long workerId, int dpRank) {
        Listener l = existing(workerId, dpRank);
        ListenerState state = l.state();
        if (state != ListenerState.PAUSED && state != ListenerState.FAILED) {
            throw Refusal.conflict("instance " + Long.toUnsignedString(workerId) + " dp_rank " + dpRank
                    + " cannot be resumed from status " + state.jsonName());
        }
        Listener next = l.nextGeneration(nextGeneration++);
        byId.get(workerId).listeners.put(dpRank, next);
        return new Resumption(partitions.get(l.partitionKey()), l, next);
    }

    /** A new, pending generation of a remote listener that is still registered, or null when it is gone or replaced. */
    public synchronized Listener restartRemote(Listener remote) {
        Worker worker = byId.get(remote.workerId());
        if (worker == null
                || worker.listeners.get(remote.dpRank()) != remote
                || remote.state() != ListenerState.REMOTE) {
            return null;
        }
        Listener next = remote.nextGeneration(nextGeneration++);
        worker.listeners.put(remote.dpRank(), next);
        worker.withoutHistory = false;
        return next;
    }

    /** A remote generation in place of a listener that is still registered, or null when it is gone or replaced. */
    public synchronized Listener toRemote(Listener listener) {
        Worker worker = byId.get(listener.workerId());
        if (worker == null || worker.listeners.get(listener.dpRank()) != listener) {
            return null;
        }
        Listener next = listener.nextGeneration(nextGeneration++);
        next.markRemote();
        worker.listeners.put(listener.dpRank(), next);
        worker.withoutHistory = false;
        return next;
    }

    private Listener existing(long workerId, int dpRank) {
        Worker worker = byId.get(workerId);
        if (worker == null) {
            throw Refusal.notFound("instance " + Long.toUnsignedString(workerId) + " not found");
        }
        Listener l = worker.listeners.get(dpRank);
        if (l == null) {
            throw rankNotFound(workerId, dpRank);
        }
        return l;
    }

    public Optional<PartitionRef> partition(PartitionKey key) {
        return Optional.ofNullable(partitions.get(key));
    }

    /** Every partition, in the order of their /dump keys ({@code model:group}), as /dump and /metrics list them. */
    public synchronized List<PartitionRef> partitions() {
        List<PartitionRef> out = new ArrayList<>(partitions.values());
        out.sort((a, b) -> a.key().dumpKey().compareTo(b.key().dumpKey()));
        return out;
    }

    /** Registered workers matching the optional filters, sorted by unsigned instance id. */
    public synchronized List<WorkerView> workers(String modelName, String routingGroup) {
        List<WorkerView> out = new ArrayList<>();
        for (Worker worker : byId.values()) {
            if ((modelName == null || worker.key.modelName().equals(modelName))
                    && (routingGroup == null || worker.key.routingGroup().equals(routingGroup))
                    && !worker.listeners.isEmpty()) {
                out.add(new WorkerView(
                        worker.id,
                        worker.name,
                        worker.key,
                        partitions.get(worker.key).blockSize(),
                        Collections.unmodifiableList(new ArrayList<>(worker.listeners.values()))));
            }
        }
        out.sort((a, b) -> Long.compareUnsigned(a.workerId(), b.workerId()));
        return out;
    }

    /** The partition an instance is registered in, or null. */
    public synchronized PartitionKey partitionOf(long workerId) {
        Worker worker = byId.get(workerId);
        return worker == null ? null : worker.key;
    }

    /** Every instance registered in a partition with its ranks, ordered by unsigned id. */
    public synchronized List<Member> members(PartitionKey key) {
        List<Member> out = new ArrayList<>();
        for (long id : partitionInstances.getOrDefault(key, List.of())) {
            Worker worker = byId.get(id);
            int[] ranks = worker.listeners.keySet().stream()
                    .mapToInt(Integer::intValue)
                    .toArray();
            boolean store = !worker.listeners.isEmpty()
                    && worker.listeners.firstEntry().getValue().publisher().isStore();
            out.add(new Member(id, worker.name, store, ranks));
        }
        out.sort((a, b) -> Long.compareUnsigned(a.workerId(), b.workerId()));
        return out;
    }

    /**
     * Whether this node holds every block of the instance: each of its listeners has run here since registration
     * (a sharded cluster's other instances are remote, and one taken over later lacks its history).
     */
    public synchronized boolean servesHere(long workerId) {
        Worker worker = byId.get(workerId);
        if (worker == null || worker.listeners.isEmpty()) {
            return false;
        }
        for (Listener l : worker.listeners.values()) {
            if (!l.serving()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Records that this node serves the instance without any of its past (see {@link Worker#withoutHistory}), until
     * its listeners go remote or a copy with history replaces this one.
     */
    public synchronized void markWithoutHistory(long workerId) {
        Worker worker = byId.get(workerId);
        if (worker != null) {
            worker.withoutHistory = true;
        }
    }

    /** Whether this node serves the instance and has its past, not only what it applied since it started. */
    public synchronized boolean servesWithHistory(long workerId) {
        return servesHere(workerId) && !byId.get(workerId).withoutHistory;
    }

    /** Whether this node serves the instance without its past. */
    public synchronized boolean servesWithoutHistory(long workerId) {
        return servesHere(workerId) && byId.get(workerId).withoutHistory;
    }

    /** Every registered instance, cluster-wide on a clustered node (others' are registered here as remote). */
    public synchronized Instances instances() {
        if (instances.version() != instancesVersion) {
            List<Instance> all = new ArrayList<>(byId.size());
            for (Worker w : byId.values()) {
                boolean store = w.listeners.isEmpty()
                        ? false
                        : w.listeners.firstEntry().getValue().publisher().isStore();
                all.add(new Instance(w.key, w.id, store));
            }
            instances = new Instances(instancesVersion, List.copyOf(all));
        }
        return instances;
    }

    public synchronized int workerCount() {
        return byId.size();
    }

    /** Every listener currently registered (for shutdown). */
    public synchronized List<Listener> listeners() {
        List<Listener> out = new ArrayList<>();
        for (Worker worker : byId.values()) {
            out.addAll(worker.listeners.values());
        }
        return out;
    }

    static String describe(PartitionKey key) {
        return "model=" + key.modelName() + " routing_group=" + key.routingGroup();
    }
}
