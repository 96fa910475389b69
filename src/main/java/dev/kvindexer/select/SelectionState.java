package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.load.SlotTracker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * The selection service's state and decisions (SPEC §12): the worker catalog, the active load of every partition (a
 * {@link SlotTracker} keyed by model and group), the pending selections, and which partition holds each reservation.
 * Single-threaded by contract, so a selection and its booking happen in one step. Refusals throw {@link Refusal}
 * and change nothing; every booking, completed prefill and release is handed to the event sink for the replicas.
 */
public final class SelectionState {
    /** A partition's fixed properties, taken from its first schedulable worker. */
    public record PartitionInfo(int blockSize, boolean eagle) {
    }

    /** What a selection request asks beyond its prompt (SPEC §12.5). Null members are absent. */
    public record Options(String selectionId, ConfigOverride override, Long expectedOutputTokens,
                          List<Long> allowedWorkers, Long pinnedWorker, Integer pinnedRank, List<String> requiredTaints,
                          Map<String, Double> preferredTaints, String loraName) {
        public static Options plain(String selectionId) {
            return new Options(selectionId, ConfigOverride.NONE, null, null, null, null, List.of(), Map.of(), null);
        }
    }

    /** The chosen worker's overlap over its whole rank range, in tokens (SPEC §12.5 {@code overlap}). */
    public record Overlap(long longestMatched, long gpu, long[] dpRanks, long[] dpTokens, long cpu, long disk) {
    }

    /** A selection's answer. */
    public record Choice(String selectionId, PartitionKey partition, WorkerEntry worker, int dpRank, int blockSize,
                         Overlap overlap, long effectivePrefill, long potentialDecodeBlocks, Prompt prompt,
                         boolean trackPrefill) {
    }

    /** A booking's answer (SPEC §12.7), with the prompt it booked. */
    public record Booking(String selectionId, PartitionKey partition, WorkerEntry worker, int dpRank, Prompt prompt) {
    }

    /** One rank's load row for /loads and /potential_loads. */
    public record LoadRow(long workerId, int dpRank, long prefillTokens, long decodeBlocks, int requests) {
    }

    /** One row of /overlap_scores, in blocks. */
    public record ScoreRow(long workerId, int dpRank, int dev, int host, int disk, double creditBlocks) {
    }

    private final SelectionConfig config;
    private final LongSupplier clockMillis;
    private final RandomGenerator random;
    private final PendingSelections pending;
    private final SlotTracker tracker;
    private final WorkerCatalog catalog = new WorkerCatalog();
    private final TreeMap<PartitionKey, PartitionInfo> partitions = new TreeMap<>();
    /** Active reservation id → where it is booked; ids are unique across partitions. */
    private final Ledger reservations;
    private final int maxBookingBlocks;

    /**
     * The held reservations and the blocks they hold together, bounded: every booking, local or a replica's, passes
     * through {@link #admits} before anything is booked.
     */
    private static final class Ledger {
        private final Map<String, Held> byId = new HashMap<>();
        private final long maxBlocks;
        private long blocks;

        Ledger(long maxBlocks) {
            this.maxBlocks = maxBlocks;
        }

        boolean admits(int more) {
            return blocks + more <= maxBlocks;
        }

        Held get(String id) {
            return byId.get(id);
        }

        boolean containsKey(String id) {
            return byId.containsKey(id);
        }

        void put(String id, Held h) {
            Held old = byId.put(id, h);
            blocks += h.sequenceHashes.length - (old == null ? 0 : old.sequenceHashes.length);
        }

        Held remove(String id) {
            Held h = byId.remove(id);
            if (h != null) {
                blocks -= h.sequenceHashes.length;
            }
            return h;
        }

        void forEach(java.util.function.BiConsumer<String, Held> action) {
            byId.forEach(action);
        }

        int size() {
            return byId.size();
        }
    }

    /** A booked reservation, local or mirrored: what it booked and how far its lifecycle has gone. */
    private static final class Held {
        final PartitionKey partition;
        final int blockSize;
        final long workerId;
        final int dpRank;
        final String loraName;
        final long[] sequenceHashes;
        final long prefillHint;
        final boolean trackPrefill;
        final Long expectedOutputTokens;
        final long bookedAtMillis;
        final long incarnation;
        /** When it was booked or mirrored here, on the monotonic clock. */
        final long appliedAt;
        boolean prefillDone;
        long outputBlocks;
        double decay = Double.NaN;
        long version = 1;

        Held(PartitionKey partition, int blockSize, long workerId, int dpRank, String loraName, long[] sequenceHashes,
             long prefillHint, boolean trackPrefill, Long expectedOutputTokens, long bookedAtMillis, long incarnation,
             long appliedAt) {
            this.partition = partition;
            this.blockSize = blockSize;
            this.workerId = workerId;
            this.dpRank = dpRank;
            this.loraName = loraName;
            this.sequenceHashes = sequenceHashes;
            this.prefillHint = prefillHint;
            this.trackPrefill = trackPrefill;
            this.expectedOutputTokens = expectedOutputTokens;
            this.bookedAtMillis = bookedAtMillis;
            this.incarnation = incarnation;
            this.appliedAt = appliedAt;
        }
    }

    /** Ids whose booking ended, by incarnation, so a late copy of that booking is not taken for a new one. */
    private final java.util.LinkedHashMap<String, long[]> ended = new java.util.LinkedHashMap<>();
    private static final long ENDED_KEPT_MILLIS = 600_000;
    private Consumer<LoadEvent> events = e -> { };
    private long refusedRemote;

    /**
     * @param maxBookingBlocks blocks one booking may hold; a larger one is refused (a replica's is dropped)
     * @param maxBookedBlocks  blocks all held bookings may hold together, mirrored ones included
     */
    public SelectionState(SelectionConfig config, LongSupplier clockMillis, RandomGenerator random,
                          PendingSelections pending, int maxBookingBlocks, long maxBookedBlocks) {
        this.reservations = new Ledger(maxBookedBlocks);
        this.maxBookingBlocks = maxBookingBlocks;
        this.config = config;
        this.clockMillis = clockMillis;
        this.random = random;
        this.pending = pending;
        this.tracker = new SlotTracker(clockMillis, config.requestExpiryMillis());
    }

    /** Where bookings, completed prefills and releases go (the replica publisher). */
    public void onEvent(Consumer<LoadEvent> sink) {
        this.events = sink;
    }

    public SelectionConfig config() {
        return config;
    }

    // ---- catalog ----

    public WorkerCatalog catalog() {
        return catalog;
    }

    public PartitionInfo partition(PartitionKey p) {
        return partitions.get(p);
    }

    public List<PartitionKey> partitions() {
        return new ArrayList<>(partitions.keySet());
    }

    /**
     * The reason a complete worker cannot join its partition, or null: the partition's block size and Eagle flag
     * are its first worker's.
     */
    public String partitionConflict(WorkerEntry e) {
        PartitionInfo info = partitions.get(e.partition());
        if (info == null) {
            return null;
        }
        if (info.blockSize != e.blockSize()) {
            return "block_size mismatch for " + e.partition() + ": existing=" + info.blockSize + " requested="
                    + e.blockSize();
        }
        if (info.eagle != e.eagle()) {
            return "is_eagle mismatch for " + e.partition() + ": existing=" + info.eagle + " requested=" + e.eagle();
        }
        return null;
    }

    /** Stores a worker that is not (or no longer) schedulable. */
    public void putIncomplete(WorkerEntry e, List<String> reasons) {
        catalog.put(e.with(Lifecycle.INCOMPLETE, reasons));
    }

    /** Stores a worker whose listeners are in place: its ranks join the partition's scheduler with no load. */
    public WorkerEntry putSchedulable(WorkerEntry e) {
        PartitionKey p = e.partition();
        partitions.putIfAbsent(p, new PartitionInfo(e.blockSize().intValue(), e.eagle()));
        tracker.register(scope(p), e.workerId(), e.blockSize().intValue(), e.firstRank(), e.rankCount());
        WorkerEntry stored = e.with(Lifecycle.SCHEDULABLE, List.of());
        catalog.put(stored);
        return stored;
    }

    /** Replaces a schedulable worker's echoed fields without touching its ranks (nothing that routes changed). */
    public WorkerEntry refresh(WorkerEntry e) {
        WorkerEntry stored = e.with(Lifecycle.SCHEDULABLE, List.of());
        catalog.put(stored);
        return stored;
    }

    /** Takes a schedulable worker's ranks out of the scheduler, dropping their reservations. */
    public void drain(WorkerEntry e) {
        if (e.lifecycle() != Lifecycle.SCHEDULABLE) {
            return;
        }
        for (String id : tracker.unregister(scope(e.partition()), e.workerId())) {
            reservations.remove(id);
        }
        catalog.put(e.with(Lifecycle.DRAINING, List.of()));
    }

    public int schedulableWorkers() {
        return catalog.schedulableCount();
    }

    // ---- selection ----

    /**
     * The partition a selection or booking may use: 503 when no worker of the whole service, or of this partition, is
     * schedulable (SPEC §12.5 step 2).
     */
    public PartitionInfo requireReady(PartitionKey p) {
        if (catalog.schedulableCount() == 0) {
            throw Refusal.unavailable("no schedulable workers are available");
        }
        PartitionInfo info = partitions.get(p);
        if (info == null || catalog.schedulable(p).isEmpty()) {
            throw Refusal.unavailable("no schedulable workers for " + p);
        }
        return info;
    }

    /** {@code POST /select}: chooses a rank and books nothing; with a selection id the choice waits for a replay. */
    public Choice select(PartitionKey p, Prompt prompt, RankOverlaps overlaps, Options o) {
        Choice c = choose(p, prompt, overlaps, o);
        if (o.selectionId() != null) {
            pending.put(p, o.selectionId(), new PendingSelections.Pending(c.worker.workerId(), c.dpRank,
                    prompt.blockHashes(), prompt.sequenceHashes(), prompt.isl(), c.effectivePrefill,
                    o.expectedOutputTokens(), o.loraName(), c.trackPrefill), clockMillis.getAsLong());
        }
        return c;
    }

    /** {@code POST /select_and_reserve}: chooses and books in one step; an absent id becomes a random UUID. */
    public Choice selectAndReserve(PartitionKey p, Prompt prompt, RankOverlaps overlaps, Options o) {
        String id = o.selectionId() != null ? o.selectionId() : UUID.randomUUID().toString();
        Choice c = choose(p, prompt, overlaps, o);
        requireFree(id);
        book(p, id, c.worker.workerId(), c.dpRank, prompt.sequenceHashes(), c.trackPrefill ? c.effectivePrefill : 0,
                c.trackPrefill, o.expectedOutputTokens(), o.loraName());
        return new Choice(id, c.partition, c.worker, c.dpRank, c.blockSize, c.overlap, c.effectivePrefill,
                c.potentialDecodeBlocks, c.prompt, c.trackPrefill);
    }

    private Choice choose(PartitionKey p, Prompt prompt, RankOverlaps overlaps, Options o) {
        PartitionInfo info = requireReady(p);
        List<RankInputs> candidates = candidates(p, prompt, overlaps, o);
        CostModel model = CostModel.of(prompt.isl(), info.blockSize, config, o.override());
        int chosen;
        if (o.pinnedWorker() != null) {
            if (o.allowedWorkers() != null && !o.allowedWorkers().contains(o.pinnedWorker())) {
                throw Refusal.badRequest("pinned worker " + Long.toUnsignedString(o.pinnedWorker())
                        + " is not in allowed worker set");
            }
            int rank = o.pinnedRank() == null ? 0 : o.pinnedRank();
            chosen = -1;
            for (int i = 0; i < candidates.size(); i++) {
                if (candidates.get(i).workerId() == o.pinnedWorker() && candidates.get(i).dpRank() == rank) {
                    chosen = i;
                }
            }
            if (chosen < 0) {
                throw Refusal.unavailable("no endpoints available to route work");
            }
        } else {
            if (candidates.isEmpty()) {
                throw Refusal.unavailable("no endpoints available to route work");
            }
            long minPrefill = Long.MAX_VALUE;
            for (RankInputs r : candidates) {
                minPrefill = Math.min(minPrefill, r.prefill());
            }
            double[] logits = new double[candidates.size()];
            for (int i = 0; i < logits.length; i++) {
                logits[i] = model.logit(candidates.get(i), minPrefill);
            }
            chosen = RankPicker.pick(logits, o.override().temperature(config), random);
        }
        RankInputs r = candidates.get(chosen);
        WorkerEntry worker = catalog.get(r.workerId());
        int nb = (int) ((prompt.isl() + info.blockSize - 1) / info.blockSize);
        long potentialDecode = r.decode() + r.newBlocks() + (nb - prompt.completeBlocks());
        return new Choice(o.selectionId(), p, worker, r.dpRank(), info.blockSize,
                overlapOf(worker, overlaps, info.blockSize), model.effectivePrefill(r), potentialDecode, prompt,
                o.override().trackPrefill(config));
    }

    /** Every eligible rank (SPEC §12.9.1), sorted by worker id and rank, with its cache hit and load. */
    private List<RankInputs> candidates(PartitionKey p, Prompt prompt, RankOverlaps overlaps, Options o) {
        List<RankInputs> out = new ArrayList<>();
        PartitionKey scope = scope(p);
        for (WorkerEntry w : catalog.schedulable(p)) {
            if (o.allowedWorkers() != null && !o.allowedWorkers().contains(w.workerId())) {
                continue;
            }
            if (!w.taints().containsAll(o.requiredTaints())) {
                continue;
            }
            double multiplier = 1.0;
            if (!o.preferredTaints().isEmpty()) {
                double sum = 0;
                for (Map.Entry<String, Double> t : o.preferredTaints().entrySet()) {
                    if (w.taints().contains(t.getKey())) {
                        sum += t.getValue();
                    }
                }
                multiplier = CostModel.taintMultiplier(sum);
            }
            for (long rank = w.firstRank(); rank < w.firstRank() + w.rankCount(); rank++) {
                SlotTracker.ActiveLoad load = tracker.activeLoad(scope, w.workerId(), rank, prompt.sequenceHashes());
                RankOverlaps.Hit hit = overlaps.of(w.workerId(), (int) rank);
                int newBlocks = prompt.completeBlocks() - (load == null ? 0 : load.activeDepth());
                out.add(load == null
                        ? new RankInputs(w.workerId(), (int) rank, hit.dev(), hit.host(), hit.disk(), 0, 0, 0,
                                newBlocks, multiplier)
                        : new RankInputs(w.workerId(), (int) rank, hit.dev(), hit.host(), hit.disk(),
                                load.prefillTokens(), load.decodeBlocks(), load.requests(), newBlocks, multiplier));
            }
        }
        return out;
    }

    private static Overlap overlapOf(WorkerEntry w, RankOverlaps overlaps, int blockSize) {
        int n = (int) w.rankCount();
        long[] ranks = new long[n];
        long[] tokens = new long[n];
        long gpu = 0;
        long cpu = 0;
        long disk = 0;
        for (int i = 0; i < n; i++) {
            RankOverlaps.Hit h = overlaps.of(w.workerId(), (int) (w.firstRank() + i));
            ranks[i] = w.firstRank() + i;
            tokens[i] = (long) h.dev() * blockSize;
            gpu = Math.max(gpu, (long) h.dev() * blockSize);
            cpu = Math.max(cpu, (long) (h.dev() + h.host()) * blockSize);
            disk = Math.max(disk, (long) (h.dev() + h.host() + h.disk()) * blockSize);
        }
        return new Overlap(Math.max(gpu, Math.max(cpu, disk)), gpu, ranks, tokens, cpu, disk);
    }

    /**
     * Whether a selection must wait in the partition's queue (SPEC §12.9.7): queueing is on and every eligible rank
     * has more active prefill than the threshold times its worker's {@code max_num_batched_tokens}.
     */
    public boolean overloaded(PartitionKey p, Options o) {
        if (!config.queueing() || o.pinnedWorker() != null) {
            return false;
        }
        PartitionKey scope = scope(p);
        boolean any = false;
        for (WorkerEntry w : catalog.schedulable(p)) {
            if ((o.allowedWorkers() != null && !o.allowedWorkers().contains(w.workerId()))
                    || !w.taints().containsAll(o.requiredTaints())) {
                continue;
            }
            double limit = config.queueThreshold() * w.maxNumBatchedTokens();
            for (long rank = w.firstRank(); rank < w.firstRank() + w.rankCount(); rank++) {
                any = true;
                SlotTracker.ActiveLoad load = tracker.activeLoad(scope, w.workerId(), rank, new long[0]);
                if (load == null || load.prefillTokens() <= limit) {
                    return false;
                }
            }
        }
        return any;
    }

    // ---- reservations ----

    /** {@code POST /reservations} by replay of a pending selection (SPEC §12.7.1). */
    public Booking reserveReplay(PartitionKey p, String id) {
        PendingSelections.Pending e = pending.peek(p, id, clockMillis.getAsLong());
        if (e == null) {
            throw Refusal.notFound("no pending selection " + id + " for " + p
                    + " (expired, already used, or never selected)");
        }
        requireReady(p);
        WorkerEntry w = catalog.get(e.workerId());
        if (w == null || w.lifecycle() != Lifecycle.SCHEDULABLE || !w.partition().equals(p) || !w.hasRank(e.dpRank())) {
            throw Refusal.notFound("schedulable worker " + Long.toUnsignedString(e.workerId()) + " (dp_rank "
                    + e.dpRank() + ") not found for " + p);
        }
        requireFree(id);
        book(p, id, e.workerId(), e.dpRank(), e.sequenceHashes(), e.trackPrefill() ? e.effectivePrefill() : 0,
                e.trackPrefill(), e.expectedOutputTokens(), e.loraName());
        pending.remove(p, id);
        return new Booking(id, p, w, e.dpRank(), new Prompt(e.blockHashes(), e.sequenceHashes(), e.isl()));
    }

    /**
     * {@code POST /reservations} naming the rank (SPEC §12.7.2). The caller has checked readiness and normalized the
     * prompt; {@code effectivePrefill} and {@code trackPrefill} are null when absent.
     */
    public Booking reserveExplicit(PartitionKey p, String id, long workerId, int dpRank, Prompt prompt,
                                   Long effectivePrefill, Boolean trackPrefill, ConfigOverride override,
                                   Long expectedOutputTokens, String loraName) {
        if (effectivePrefill != null && effectivePrefill > prompt.isl()) {
            throw Refusal.badRequest("effective_prefill_tokens (" + effectivePrefill
                    + ") must not exceed isl_tokens (" + prompt.isl() + ")");
        }
        pending.remove(p, id);
        WorkerEntry w = catalog.get(workerId);
        if (w == null || w.lifecycle() != Lifecycle.SCHEDULABLE || !w.partition().equals(p)) {
            throw Refusal.notFound("schedulable worker " + Long.toUnsignedString(workerId) + " not found for " + p);
        }
        boolean track = trackPrefill != null ? trackPrefill
                : effectivePrefill != null || override.trackPrefill(config);
        requireFree(id);
        book(p, id, workerId, dpRank, prompt.sequenceHashes(), track && effectivePrefill != null ? effectivePrefill : 0,
                track, expectedOutputTokens, loraName);
        return new Booking(id, p, w, dpRank, prompt);
    }

    private void requireFree(String id) {
        if (reservations.containsKey(id)) {
            throw Refusal.conflict("selection " + id + " is already reserved or being reserved");
        }
    }

    private void book(PartitionKey p, String id, long workerId, int dpRank, long[] sequenceHashes, long prefillHint,
                      boolean track, Long expectedOutputTokens, String loraName) {
        if (sequenceHashes.length > maxBookingBlocks) {
            throw Refusal.invalid("a booking of " + sequenceHashes.length + " blocks is over the limit of "
                    + maxBookingBlocks + " blocks per booking (--max-booking-blocks)");
        }
        if (!reservations.admits(sequenceHashes.length)) {
            throw Refusal.full("active bookings hold the most blocks this service keeps (--max-booked-blocks);"
                    + " try again when some have ended");
        }
        tracker.add(scope(p), id, workerId, dpRank, sequenceHashes, prefillHint);
        reservations.put(id, new Held(p, partitions.get(p).blockSize, workerId, dpRank, loraName, sequenceHashes,
                prefillHint, track, expectedOutputTokens, System.currentTimeMillis(), random.nextLong(),
                clockMillis.getAsLong()));
        events.accept(new LoadEvent.Added(p, partitions.get(p).blockSize, id, workerId, dpRank, loraName,
                sequenceHashes, track, expectedOutputTokens, prefillHint));
    }

    /** {@code POST /reservations/{id}/prefill_complete}; repeating it is harmless and republished. */
    public void prefillComplete(String id) {
        Held h = held(id);
        tracker.prefillComplete(scope(h.partition), id);
        if (!h.prefillDone) {
            h.prefillDone = true;
            h.version++;
        }
        events.accept(new LoadEvent.PrefillCompleted(h.partition, partitions.get(h.partition).blockSize, id,
                h.workerId, h.dpRank, h.loraName));
    }

    /** {@code POST /reservations/{id}/output_block}: NaN for no decay fraction. */
    public void outputBlock(String id, double decayFraction) {
        if (!Double.isNaN(decayFraction) && !(decayFraction >= 0.0 && decayFraction <= 1.0)) {
            throw Refusal.badRequest("decay_fraction must be between 0.0 and 1.0");
        }
        Held h = held(id);
        tracker.outputBlock(scope(h.partition), id, decayFraction);
        h.outputBlocks++;
        if (!Double.isNaN(decayFraction)) {
            h.decay = decayFraction;
        }
        h.version++;
    }

    /** {@code DELETE /reservations/{id}}. */
    public void free(String id) {
        Held h = held(id);
        tracker.free(scope(h.partition), id);
        reservations.remove(id);
        markEnded(id, h.incarnation);
        events.accept(new LoadEvent.Freed(h.partition, partitions.get(h.partition).blockSize, id, h.workerId,
                h.dpRank, h.loraName));
    }

    private Held held(String id) {
        Held h = reservations.get(id);
        if (h == null) {
            throw Refusal.notFound("reservation " + id + " not found");
        }
        return h;
    }

    /**
     * Applies a peer replica's event to the local load (SPEC §12.13.3): dropped when the partition is unknown here or
     * has another block size, or the rank is not registered; a booking of an id already held is ignored. Nothing is
     * published. Returns whether the event changed anything.
     */
    public boolean applyRemote(LoadEvent e) {
        PartitionInfo info = partitions.get(e.partition());
        if (info == null || info.blockSize != e.blockSize()) {
            return false;
        }
        PartitionKey scope = scope(e.partition());
        if (e instanceof LoadEvent.Added a) {
            if (!admits(a.sequenceHashes().length) || reservations.containsKey(a.requestId())
                    || tracker.activeLoad(scope, a.workerId(), a.dpRank(), new long[0]) == null) {
                return false;
            }
            tracker.add(scope, a.requestId(), a.workerId(), a.dpRank(), a.sequenceHashes(),
                    a.trackPrefill() ? a.prefillHint() : 0);
            reservations.put(a.requestId(), new Held(a.partition(), a.blockSize(), a.workerId(), a.dpRank(), a.loraName(),
                    a.sequenceHashes(), a.prefillHint(), a.trackPrefill(), a.expectedOutputTokens(),
                    System.currentTimeMillis(), random.nextLong(), clockMillis.getAsLong()));
            return true;
        }
        Held h = reservations.get(e.requestId());
        if (h == null || !h.partition.equals(e.partition())) {
            return false;
        }
        if (e instanceof LoadEvent.PrefillCompleted) {
            tracker.prefillComplete(scope, e.requestId());
            h.prefillDone = true;
        } else {
            tracker.free(scope, e.requestId());
            reservations.remove(e.requestId());
        }
        return true;
    }

    // ---- replication in a cluster ----

    /** A held reservation's whole state, or null. */
    public ReservationRecord record(String id) {
        Held h = reservations.get(id);
        return h == null ? null : new ReservationRecord(id, h.partition, h.blockSize, h.workerId, h.dpRank,
                h.loraName, h.sequenceHashes, h.prefillHint, h.trackPrefill, h.expectedOutputTokens, h.prefillDone,
                h.outputBlocks, h.decay, h.bookedAtMillis, h.incarnation, h.version);
    }

    /**
     * Brings the local copy of a reservation up to a replica's record: booked when absent (replacing an older booking
     * of the same id), then its prefill, output blocks and decay caught up. A record older than the local copy, of a
     * booking that has ended, or that this replica cannot place (unknown partition or rank) changes nothing. Nothing
     * is published. Returns whether anything changed.
     */
    public boolean upsert(ReservationRecord r) {
        long[] end = ended.get(r.id());
        if (end != null && end[0] == r.incarnation()) {
            return false;
        }
        PartitionInfo info = partitions.get(r.partition());
        if (info == null || info.blockSize != r.blockSize()) {
            return false;
        }
        PartitionKey scope = scope(r.partition());
        Held h = reservations.get(r.id());
        if (h != null && h.incarnation != r.incarnation()) {
            release(r.id(), h);
            h = null;
        }
        if (h == null) {
            if (!admits(r.sequenceHashes().length)
                    || tracker.activeLoad(scope, r.workerId(), r.dpRank(), new long[0]) == null) {
                return false;
            }
            tracker.add(scope, r.id(), r.workerId(), r.dpRank(), r.sequenceHashes(),
                    r.trackPrefill() ? r.prefillHint() : 0);
            h = new Held(r.partition(), r.blockSize(), r.workerId(), r.dpRank(), r.loraName(), r.sequenceHashes(),
                    r.prefillHint(), r.trackPrefill(), r.expectedOutputTokens(), r.bookedAtMillis(), r.incarnation(),
                    clockMillis.getAsLong());
            h.version = 0;
            reservations.put(r.id(), h);
        } else if (r.version() <= h.version) {
            return false;
        }
        if (r.prefillDone() && !h.prefillDone) {
            tracker.prefillComplete(scope, r.id());
            h.prefillDone = true;
        }
        for (; h.outputBlocks < r.outputBlocks(); h.outputBlocks++) {
            tracker.outputBlock(scope, r.id(), Double.NaN);
        }
        if (!Double.isNaN(r.decay()) && Double.compare(r.decay(), h.decay) != 0) {
            tracker.decay(scope, r.id(), r.decay());
            h.decay = r.decay();
        }
        h.version = Math.max(h.version, r.version());
        return true;
    }

    /** Whether a replica's booking of {@code blocks} fits both bounds; one that does not is counted and dropped. */
    private boolean admits(int blocks) {
        if (blocks <= maxBookingBlocks && reservations.admits(blocks)) {
            return true;
        }
        refusedRemote++;
        return false;
    }

    /** Replicas' bookings dropped because they were over a bound. */
    public long refusedRemoteBookings() {
        return refusedRemote;
    }

    /** Ends a booking another replica ended (only that incarnation of the id); nothing is published. */
    public boolean forget(String id, long incarnation) {
        Held h = reservations.get(id);
        markEnded(id, incarnation);
        if (h == null || h.incarnation != incarnation) {
            return false;
        }
        release(id, h);
        return true;
    }

    /** Ids held here that were booked or mirrored before {@code monotonicMillis}. */
    public List<String> heldBefore(long monotonicMillis) {
        List<String> out = new ArrayList<>();
        reservations.forEach((id, h) -> {
            if (h.appliedAt < monotonicMillis) {
                out.add(id);
            }
        });
        return out;
    }

    public long nowMillis() {
        return clockMillis.getAsLong();
    }

    private void release(String id, Held h) {
        tracker.free(scope(h.partition), id);
        reservations.remove(id);
    }

    /** Remembers that this booking of the id has ended, forgetting bookings that ended long ago. */
    private void markEnded(String id, long incarnation) {
        long now = clockMillis.getAsLong();
        java.util.Iterator<long[]> it = ended.values().iterator();
        while (it.hasNext() && it.next()[1] < now - ENDED_KEPT_MILLIS) {
            it.remove();
        }
        ended.put(id, new long[] {incarnation, now});
    }

    /** Drops reservations older than the expiry; not published (SPEC §12.8.3). Returns how many. */
    public int expireStale() {
        return tracker.expireStale(reservations::remove);
    }

    public int activeReservations() {
        return reservations.size();
    }

    /** Blocks the held reservations hold together. */
    public long bookedBlocks() {
        return reservations.blocks;
    }

    // ---- views ----

    /** Every rank of a partition's schedulable workers with its load, sorted by worker id and rank. */
    public List<LoadRow> loads(PartitionKey p) {
        List<LoadRow> out = new ArrayList<>();
        PartitionKey scope = scope(p);
        for (WorkerEntry w : catalog.schedulable(p)) {
            for (long rank = w.firstRank(); rank < w.firstRank() + w.rankCount(); rank++) {
                SlotTracker.ActiveLoad l = tracker.activeLoad(scope, w.workerId(), rank, new long[0]);
                out.add(l == null ? new LoadRow(w.workerId(), (int) rank, 0, 0, 0)
                        : new LoadRow(w.workerId(), (int) rank, l.prefillTokens(), l.decodeBlocks(), l.requests()));
            }
        }
        return out;
    }

    /** {@code POST /potential_loads} (SPEC §12.11.2): each rank's load if this prompt were booked there. */
    public List<LoadRow> potentialLoads(PartitionKey p, Prompt prompt, RankOverlaps overlaps, ConfigOverride override) {
        PartitionInfo info = requireReady(p);
        CostModel model = CostModel.of(prompt.isl(), info.blockSize, config, override);
        boolean track = override.trackPrefill(config);
        List<LoadRow> out = new ArrayList<>();
        for (RankInputs r : candidates(p, prompt, overlaps, Options.plain(null))) {
            long delta = track ? model.effectivePrefill(r) : 0;
            out.add(new LoadRow(r.workerId(), r.dpRank(), r.prefill() + delta, r.decode() + r.newBlocks(),
                    r.requests()));
        }
        return out;
    }

    /** {@code POST /overlap_scores} (SPEC §12.11.3): every schedulable rank and every rank the index matched. */
    public List<ScoreRow> overlapScores(PartitionKey p, Prompt prompt, RankOverlaps overlaps, ConfigOverride override) {
        PartitionInfo info = requireReady(p);
        CostModel model = CostModel.of(prompt.isl(), info.blockSize, config, override);
        TreeMap<RankKey, RankOverlaps.Hit> rows = new TreeMap<>();
        for (WorkerEntry w : catalog.schedulable(p)) {
            for (long rank = w.firstRank(); rank < w.firstRank() + w.rankCount(); rank++) {
                rows.put(new RankKey(w.workerId(), (int) rank), overlaps.of(w.workerId(), (int) rank));
            }
        }
        for (RankOverlaps.Hit h : overlaps.hits()) {
            rows.put(new RankKey(h.workerId(), h.dpRank()), h);
        }
        List<ScoreRow> out = new ArrayList<>();
        for (RankOverlaps.Hit h : rows.values()) {
            RankInputs r = new RankInputs(h.workerId(), h.dpRank(), h.dev(), h.host(), h.disk(), 0, 0, 0, 0, 1.0);
            out.add(new ScoreRow(h.workerId(), h.dpRank(), h.dev(), h.host(), h.disk(), model.creditBlocks(r)));
        }
        return out;
    }

    private record RankKey(long workerId, int dpRank) implements Comparable<RankKey> {
        @Override
        public int compareTo(RankKey o) {
            int c = Long.compareUnsigned(workerId, o.workerId);
            return c != 0 ? c : Integer.compare(dpRank, o.dpRank);
        }
    }

    private static PartitionKey scope(PartitionKey p) {
        return new PartitionKey(p.modelName(), p.routingGroup());
    }
}
