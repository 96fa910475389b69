package dev.kvindexer.load;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.load.TrackerState.Rank;
import dev.kvindexer.load.TrackerState.Request;
import dev.kvindexer.load.TrackerState.Scope;
import dev.kvindexer.load.TrackerState.Worker;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.LongPredicate;
import java.util.function.LongSupplier;

/**
 * Active-request load accounting per registered worker rank (docs/api/slot-tracker.md, Dynamo's standalone slot tracker): workers
 * register DP ranges per (model, routing group), requests are added with their prompt's sequence hashes and freed, and loads
 * are read as snapshots or projected for a new request. Single-threaded by contract: one verticle owns it. A refused
 * operation throws {@link Refusal} and changes nothing.
 *
 * <p>Per rank: {@code active_prefill_tokens} is the sum of {@code new_isl_tokens} of its requests whose prefill is not
 * complete; {@code active_decode_blocks} is the number of distinct sequence hashes of its active requests, each
 * reference counted so a block shared by two requests counts once and stays until both are gone.
 */
public final class SlotTracker {
    /** The largest DP range one registration may name: every rank is listed by /loads, so it must stay bounded. */
    public static final long MAX_DP_SIZE = 4096;

    private static final long U32_LIMIT = 1L << 32;

    private final LongSupplier clockMillis;
    private final long requestTtlMillis;
    private final TreeMap<PartitionKey, Scope> scopes = new TreeMap<>();
    private final LongOpenHashSet scratch = new LongOpenHashSet();
    private int activeRequests;

    /** @param clockMillis a monotonic clock in milliseconds; requests expire {@code requestTtlMillis} after their add */
    public SlotTracker(LongSupplier clockMillis, long requestTtlMillis) {
        this.clockMillis = clockMillis;
        this.requestTtlMillis = requestTtlMillis;
    }

    /** On the JVM's monotonic clock. */
    public SlotTracker(long requestTtlMillis) {
        this(() -> System.nanoTime() / 1_000_000, requestTtlMillis);
    }

    // ---- topology ----

    public void register(PartitionKey key, long workerId, int blockSize, long dpStart, long dpSize) {
        if (blockSize <= 0) {
            throw Refusal.badRequest("block_size must be greater than 0");
        }
        checkRange(dpStart, dpSize);
        Scope scope = scopes.get(key);
        if (scope != null && scope.blockSize != blockSize) {
            throw Refusal.conflict("block_size mismatch for " + describe(key) + ": existing=" + scope.blockSize
                    + ", requested=" + blockSize);
        }
        if (scope != null && scope.workers.containsKey(workerId)) {
            throw Refusal.conflict(
                    "worker " + Long.toUnsignedString(workerId) + " already registered for " + describe(key));
        }
        if (scope == null) {
            scope = new Scope(key, blockSize);
            scopes.put(key, scope);
        }
        scope.workers.put(workerId, new Worker(workerId, dpStart, (int) dpSize, scope));
    }

    /**
     * Removes the worker's whole DP range and its active requests; the tracker goes with its last worker. Returns the
     * ids of the requests dropped.
     */
    public List<String> unregister(PartitionKey key, long workerId) {
        Worker w = registered(key, workerId);
        Scope scope = w.scope;
        List<String> dropped = dropRequests(w, rank -> true);
        scope.workers.remove(workerId);
        for (Rank r : w.ranks) {
            scope.retire(r);
        }
        if (scope.workers.isEmpty()) {
            scopes.remove(key);
        }
        return dropped;
    }

    /**
     * Moves a registered worker to the DP range {@code dpStart .. dpStart + dpSize - 1}: a rank in both ranges keeps
     * its load and its requests, a rank outside the new one goes with its requests, a new rank starts idle. Returns
     * the ids of the requests dropped.
     */
    public List<String> reshape(PartitionKey key, long workerId, long dpStart, long dpSize) {
        checkRange(dpStart, dpSize);
        Worker w = registered(key, workerId);
        Scope scope = w.scope;
        LongPredicate gone = rank -> rank < dpStart || rank >= dpStart + dpSize;
        List<String> dropped = dropRequests(w, gone);
        Rank[] next = new Rank[(int) dpSize];
        for (int i = 0; i < next.length; i++) {
            Rank kept = w.rank(dpStart + i);
            next[i] = kept != null ? kept : scope.newRank();
        }
        for (int i = 0; i < w.ranks.length; i++) {
            if (gone.test(w.dpStart + i)) {
                scope.retire(w.ranks[i]);
            }
        }
        w.dpStart = dpStart;
        w.ranks = next;
        return dropped;
    }

    private Worker registered(PartitionKey key, long workerId) {
        Scope scope = scopes.get(key);
        Worker w = scope == null ? null : scope.workers.get(workerId);
        if (w == null) {
            throw Refusal.notFound("worker " + Long.toUnsignedString(workerId) + " not found for " + describe(key));
        }
        return w;
    }

    /** Takes the worker's requests on the ranks {@code gone} picks out of its scope; returns their ids. */
    private List<String> dropRequests(Worker w, LongPredicate gone) {
        List<String> dropped = new ArrayList<>();
        w.scope.requests.entrySet().removeIf(e -> {
            Request r = e.getValue();
            if (r.worker == w && gone.test(r.dpRank)) {
                activeRequests--;
                dropped.add(e.getKey());
                return true;
            }
            return false;
        });
        return dropped;
    }

    private static void checkRange(long dpStart, long dpSize) {
        if (dpSize <= 0) {
            throw Refusal.badRequest("dp_size must be greater than 0");
        }
        if (dpSize > MAX_DP_SIZE) {
            throw Refusal.badRequest("dp_size " + dpSize + " exceeds the maximum " + MAX_DP_SIZE);
        }
        // Dynamo adds the two as u32 with checked_add: the sum itself must fit, so the last rank is at most 2^32 - 2.
        if (dpStart < 0 || dpStart >= U32_LIMIT || dpStart + dpSize >= U32_LIMIT) {
            throw Refusal.badRequest("dp range overflows u32: start=" + dpStart + " size=" + dpSize);
        }
    }

    /** Registrations sorted by model, routing group and worker id; a null filter matches everything. */
    public List<TrackerViews.Worker> workers(String modelName, String routingGroup) {
        List<TrackerViews.Worker> out = new ArrayList<>();
        forEachScope(
                modelName,
                routingGroup,
                s -> s.workers
                        .values()
                        .forEach(w -> out.add(new TrackerViews.Worker(
                                w.id,
                                s.key.modelName(),
                                s.key.routingGroup(),
                                s.blockSize,
                                w.dpStart,
                                w.ranks.length))));
        return out;
    }

    // ---- lifecycle ----

    public void add(
            PartitionKey key, String requestId, long workerId, long dpRank, long[] sequenceHashes, long newIslTokens) {
        Scope scope = scope(key);
        Worker w = scope.workers.get(workerId);
        Rank rank = w == null ? null : w.rank(dpRank);
        if (rank == null) {
            throw Refusal.notFound("Worker " + workerWithRank(workerId, dpRank) + " not found");
        }
        Request existing = scope.requests.get(requestId);
        if (existing != null) {
            throw Refusal.conflict("Request " + requestId + " already exists (assigned to worker "
                    + workerWithRank(existing.worker.id, existing.dpRank) + ")");
        }
        scope.requests.put(
                requestId, new Request(requestId, w, dpRank, sequenceHashes, newIslTokens, clockMillis.getAsLong()));
        activeRequests++;
        rank.requests++;
        rank.prefillTokens += newIslTokens;
        for (long h : sequenceHashes) {
            rank.hold(h);
        }
    }

    /** The request's prompt is processed: its tokens stop counting as prefill load. Repeating it changes nothing. */
    public void prefillComplete(PartitionKey key, String requestId) {
        Request r = scope(key).requests.get(requestId);
        if (r == null) {
            throw Refusal.notFound("Request " + requestId + " not found");
        }
        completePrefill(r);
    }

    /** Releases the request; an unknown request is already free (idempotent while the tracker exists). */
    public void free(PartitionKey key, String requestId) {
        Scope scope = scope(key);
        Request r = scope.requests.remove(requestId);
        if (r != null) {
            release(r);
        }
    }

    private void completePrefill(Request r) {
        if (r.prefillPending) {
            r.prefillPending = false;
            r.rank.prefillTokens -= r.newIslTokens;
        }
    }

    /** Undoes an add; the caller has taken the request out of its scope's map. */
    private void release(Request r) {
        activeRequests--;
        r.rank.requests--;
        r.rank.outputBlocks -= r.outputBlocks;
        if (r.decay != 1.0) {
            r.rank.decayed.remove(r);
        }
        completePrefill(r);
        for (long h : r.hashes) {
            r.rank.letGo(h);
        }
    }

    /** Drops requests added at least the TTL ago, oldest first; returns how many. */
    public int expireStale() {
        return expireStale(id -> {});
    }

    /** {@link #expireStale()}, handing each dropped request's id to {@code expired}. */
    public int expireStale(Consumer<String> expired) {
        long cutoff = clockMillis.getAsLong() - requestTtlMillis;
        int count = 0;
        for (Scope scope : scopes.values()) {
            Iterator<Request> it = scope.requests.values().iterator();
            while (it.hasNext()) {
                Request r = it.next();
                if (r.addedAt > cutoff) {
                    break;
                }
                it.remove();
                release(r);
                expired.accept(r.id);
                count++;
            }
        }
        return count;
    }

    // ---- loads ----

    /** One entry per registered (worker, dp_rank), zeros included, sorted by model, routing group, worker and rank. */
    public List<TrackerViews.RankLoad> loads(String modelName, String routingGroup) {
        List<TrackerViews.RankLoad> out = new ArrayList<>();
        forEachScope(modelName, routingGroup, s -> {
            for (Worker w : s.workers.values()) {
                for (int i = 0; i < w.ranks.length; i++) {
                    Rank r = w.ranks[i];
                    out.add(new TrackerViews.RankLoad(
                            s.key.modelName(),
                            s.key.routingGroup(),
                            w.id,
                            w.dpStart + i,
                            r.prefillTokens,
                            r.blocks.size()));
                }
            }
        });
        return out;
    }

    /**
     * Every registered rank's load if a request with these hashes and new tokens were added there: prefill plus the
     * new tokens, the distinct blocks of the union of its active hashes and the request's, and its active requests.
     */
    public List<TrackerViews.PotentialLoad> potentialLoads(PartitionKey key, long[] sequenceHashes, long newIslTokens) {
        Scope scope = scope(key);
        List<TrackerViews.PotentialLoad> out = new ArrayList<>();
        LongOpenHashSet distinct = scratch;
        distinct.clear();
        for (long h : sequenceHashes) {
            distinct.add(h);
        }
        // How many of the distinct hashes each rank holds, from the hashes' holders: no lookup per (rank, hash).
        int[] held = new int[scope.indexes];
        for (long h : distinct) {
            scope.holders.countHolders(h, held);
        }
        for (Worker w : scope.workers.values()) {
            for (int i = 0; i < w.ranks.length; i++) {
                Rank r = w.ranks[i];
                int added = distinct.size() - held[r.index];
                out.add(new TrackerViews.PotentialLoad(
                        w.id, w.dpStart + i, r.prefillTokens + newIslTokens, r.blocks.size() + added, r.requests));
            }
        }
        distinct.clear();
        return out;
    }

    /**
     * A peer replica's change (Dynamo's replica sync): applied when this replica tracks the same worker rank under the
     * same block size, else dropped, as is one this tracker refuses. It never creates a worker. Returns whether it
     * applied.
     */
    public boolean applyReplica(LoadEvent e) {
        Scope scope = scopes.get(e.partition());
        if (scope == null || scope.blockSize != e.blockSize() || rank(scope, e.workerId(), e.dpRank()) == null) {
            return false;
        }
        try {
            if (e instanceof LoadEvent.Added a) {
                add(
                        a.partition(),
                        a.requestId(),
                        a.workerId(),
                        a.dpRank(),
                        a.sequenceHashes(),
                        a.trackPrefill() ? a.prefillHint() : 0);
            } else if (e instanceof LoadEvent.PrefillCompleted) {
                prefillComplete(e.partition(), e.requestId());
            } else {
                free(e.partition(), e.requestId());
            }
            return true;
        } catch (Refusal refused) {
            return false;
        }
    }

    /** The tracker's block size, or 0 when there is no such tracker. */
    public int blockSize(PartitionKey key) {
        Scope scope = scopes.get(key);
        return scope == null ? 0 : scope.blockSize;
    }

    /** The (worker id, dp rank) an active request was added to, or null. */
    public long[] placement(PartitionKey key, String requestId) {
        Scope scope = scopes.get(key);
        Request r = scope == null ? null : scope.requests.get(requestId);
        return r == null ? null : new long[] {r.worker.id, r.dpRank};
    }

    /** Whether the request is active in this tracker. */
    public boolean holds(PartitionKey key, String requestId) {
        Scope scope = scopes.get(key);
        return scope != null && scope.requests.containsKey(requestId);
    }

    /**
     * Adds one output block to an active request. With a decay fraction (NaN for none), every block only this request
     * holds, its output blocks and the part of its prompt no other active request shares, weighs that fraction from
     * now on; the last fraction given wins.
     */
    public void outputBlock(PartitionKey key, String requestId, double decayFraction) {
        Request r = scope(key).requests.get(requestId);
        if (r == null) {
            throw Refusal.notFound("Request " + requestId + " not found");
        }
        r.outputBlocks++;
        r.rank.outputBlocks++;
        if (!Double.isNaN(decayFraction)) {
            setDecay(r, decayFraction);
        }
    }

    /** Sets the weight of the blocks only this request holds, as an output block's decay fraction does. */
    public void decay(PartitionKey key, String requestId, double fraction) {
        Request r = scope(key).requests.get(requestId);
        if (r == null) {
            throw Refusal.notFound("Request " + requestId + " not found");
        }
        setDecay(r, fraction);
    }

    private static void setDecay(Request r, double fraction) {
        if (r.decay == 1.0 && fraction != 1.0) {
            r.rank.decayed.add(r);
        } else if (r.decay != 1.0 && fraction == 1.0) {
            r.rank.decayed.remove(r);
        }
        r.decay = fraction;
    }

    /**
     * Every registered rank's active load as a selection weighs it (docs/api/selection.md#reservation-lifecycle,
     * docs/api/selection.md#per-rank-inputs): prefill tokens, decode blocks (distinct prompt blocks plus output blocks,
     * each weighted), active requests, and how many leading {@code sequenceHashes} are already active there. The
     * depths are found for all ranks at once, block after block, a word of 64 ranks at a time, until no rank goes
     * deeper; the answer is good until the tracker next changes.
     */
    public ActiveLoads activeLoads(PartitionKey key, long[] sequenceHashes) {
        Scope scope = scopes.get(key);
        if (scope == null) {
            return new ActiveLoads(null, new int[0]);
        }
        int[] depths = new int[scope.indexes];
        scope.holders.depths(sequenceHashes, scope.indexes, depths);
        return new ActiveLoads(scope, depths);
    }

    /** One registered rank's active load, with no prompt to weigh (an active depth of 0); null when unregistered. */
    public ActiveLoad activeLoad(PartitionKey key, long workerId, long dpRank) {
        Rank rank = rank(scopes.get(key), workerId, dpRank);
        return rank == null ? null : rank.load(0);
    }

    private static Rank rank(Scope scope, long workerId, long dpRank) {
        Worker w = scope == null ? null : scope.workers.get(workerId);
        return w == null ? null : w.rank(dpRank);
    }

    /**
     * The loads {@link #activeLoads} found, read one rank at a time by one thread; good until the tracker next
     * changes.
     */
    public static final class ActiveLoads {
        private final Scope scope;
        private final int[] depths;
        /** The worker of the last rank read: a selection reads a worker's ranks one after the other. */
        private Worker last;

        private ActiveLoads(Scope scope, int[] depths) {
            this.scope = scope;
            this.depths = depths;
        }

        /** The rank's load; null when it is not registered. */
        public ActiveLoad of(long workerId, long dpRank) {
            Worker w = last;
            if (w == null || w.id != workerId) {
                w = scope == null ? null : scope.workers.get(workerId);
                if (w == null) {
                    return null;
                }
                last = w;
            }
            Rank rank = w.rank(dpRank);
            return rank == null ? null : rank.load(rank.index < depths.length ? depths[rank.index] : 0);
        }
    }

    /** A rank's load for a selection; {@code activeDepth} counts the request's leading blocks already active. */
    public record ActiveLoad(long prefillTokens, long decodeBlocks, int requests, int activeDepth) {}

    // ---- figures ----

    public int activeRequests() {
        return activeRequests;
    }

    public int trackedWorkers() {
        int n = 0;
        for (Scope s : scopes.values()) {
            n += s.workers.size();
        }
        return n;
    }

    private Scope scope(PartitionKey key) {
        Scope scope = scopes.get(key);
        if (scope == null) {
            throw Refusal.notFound("no slot tracker for " + describe(key));
        }
        return scope;
    }

    private void forEachScope(String modelName, String routingGroup, Consumer<Scope> action) {
        for (Map.Entry<PartitionKey, Scope> e : scopes.entrySet()) {
            PartitionKey k = e.getKey();
            if ((modelName == null || modelName.equals(k.modelName()))
                    && (routingGroup == null || routingGroup.equals(k.routingGroup()))) {
                action.accept(e.getValue());
            }
        }
    }

    /** Dynamo's wording, so a consumer matching on it keeps working. */
    private static String describe(PartitionKey key) {
        return "model=" + key.modelName() + " routing_group=" + key.routingGroup();
    }

    private static String workerWithRank(long workerId, long dpRank) {
        return "WorkerWithDpRank { worker_id: " + Long.toUnsignedString(workerId) + ", dp_rank: " + dpRank + " }";
    }
}
