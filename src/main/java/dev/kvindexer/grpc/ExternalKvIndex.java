package dev.kvindexer.grpc;

import com.google.protobuf.Internal;
import com.google.protobuf.Message;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ConfigureExpectedWorkersRequest;
import dev.kvindexer.grpc.v1.ExpectedWorker;
import dev.kvindexer.grpc.v1.ExternalKvAction;
import dev.kvindexer.grpc.v1.ExternalKvActionType;
import dev.kvindexer.grpc.v1.ExternalKvNodeMatch;
import dev.kvindexer.grpc.v1.ExternalKvPrefixMatch;
import dev.kvindexer.grpc.v1.HitCountEntry;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixResponse;
import dev.kvindexer.grpc.v1.ReplaceExternalKvSnapshotRequest;
import dev.kvindexer.grpc.v1.TierHashes;
import dev.kvindexer.grpc.v1.TierType;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import it.unimi.dsi.fastutil.longs.LongIterator;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The placements SGLang's KVIndexer contract keeps (docs/api/sglang-grpc.md#state): blocks by engine hash, each with
 * the (worker, tier, component mask) placements that hold it and a token count; the workers with their address, cache
 * spec and sequence fence; hit counters. Requests reach it already checked ({@link RequestChecks}). Not thread-safe:
 * {@link ExternalKvService} runs changes under the write half of a lock and queries under the read half (a counting
 * match under the write half).
 */
final class ExternalKvIndex {
    static final int TIERS = 4; // indexed by TierType number; 0 is never used
    static final int FULL = 1;
    static final int SWA = 2;
    static final int MAMBA = 4;
    /** The tiers a prefix may be served from: HBM and DRAM, as bits (1 << tier). */
    static final int SERVABLE_TIERS = (1 << TierType.TIER_HBM_VALUE) | (1 << TierType.TIER_DRAM_VALUE);

    /** A block's placements, packed one to a long: worker slot, tier, component mask. */
    static final class Block {
        /** A u32, as sent: read it with {@link Integer#toUnsignedLong}. */
        int tokenCount;

        long[] placements = new long[2];
        int size;
    }

    private final int maxWorkers;
    private final long maxPlacements;
    /** (block, worker, tier) placements held: what a bridge's batches make the node keep. */
    private long placements;

    private final Long2ObjectOpenHashMap<Block> blocks = new Long2ObjectOpenHashMap<>();
    private final Long2LongOpenHashMap hits = new Long2LongOpenHashMap();
    private final Map<String, ExternalWorker> workers = new HashMap<>();
    private final List<ExternalWorker> slots = new ArrayList<>();
    private final IntArrayList freeSlots = new IntArrayList();

    /**
     * @param maxWorkers    workers held at once; a change that would make more is refused
     * @param maxPlacements placements held at once; a batch or snapshot that could pass it is refused
     */
    ExternalKvIndex(int maxWorkers, long maxPlacements) {
        this.maxWorkers = maxWorkers;
        this.maxPlacements = maxPlacements;
    }

    /** Raised for a change that would hold more than the limits allow (RESOURCE_EXHAUSTED): nothing changed. */
    static final class Full extends RuntimeException {
        Full(String message) {
            super(message, null, false, false);
        }
    }

    /** Raised for a request the state refuses as it stands (FAILED_PRECONDITION). */
    static final class Precondition extends RuntimeException {
        Precondition(String message) {
            super(message, null, false, false);
        }
    }

    /** Sets the expected workers: those not listed go with their placements, the listed ones are made or updated. */
    int[] configure(List<ExpectedWorker> expected) {
        Set<String> listed = new HashSet<>();
        expected.forEach(w -> listed.add(w.getWorkerId()));
        if (listed.size() > maxWorkers) {
            throw new Full("at most " + maxWorkers + " workers, " + listed.size() + " configured");
        }
        for (ExternalWorker w : List.copyOf(workers.values())) {
            if (!listed.contains(w.id)) {
                revokeAll(w);
                workers.remove(w.id);
                slots.set(w.slot, null);
                freeSlots.add(w.slot);
            }
        }
        for (ExpectedWorker e : expected) {
            ExternalWorker w = workerOrNew(e.getWorkerId());
            w.address = e.getWorkerAddress();
            w.spec = e.hasCacheSpec() ? CacheSpec.of(e.getCacheSpec()) : null;
        }
        return new int[] {workers.size(), readyWorkers()};
    }

    long replace(ReplaceExternalKvSnapshotRequest r) {
        ExternalWorker w = workers.get(r.getWorkerId());
        if (w == null) {
            throw new Precondition("worker must be configured before snapshot replacement");
        }
        long incoming = 0;
        for (TierHashes t : r.getHashesByTierList()) {
            incoming += t.getHashesCount();
        }
        roomFor(incoming - w.placementCount());
        revokeAll(w);
        for (TierHashes t : r.getHashesByTierList()) {
            reportAll(w, t.getTierValue(), t.getHashesList(), t.getComponentMasksList(), t.getBlockSizesList());
        }
        w.address = r.getWorkerAddress();
        w.spec = r.hasCacheSpec() ? CacheSpec.of(r.getCacheSpec()) : null;
        w.ready = true;
        w.epoch = r.getWorkerEpoch();
        w.lastSeq = r.getAppliedSeq();
        w.hasLastSeq = true;
        return r.getAppliedSeq();
    }

    /** Applies a batch; returns {applied_seq, duplicate ? 1 : 0}. */
    long[] apply(ApplyExternalKvBatchRequest r) {
        ExternalWorker w = workers.get(r.getWorkerId());
        if (r.getEnforceSequence()) {
            if (w == null) {
                throw new Precondition("worker must be configured before recovery-aware apply");
            }
            if (!w.ready || !r.getWorkerEpoch().equals(w.epoch)) {
                throw new Precondition("worker has no READY snapshot for this epoch");
            }
            long last = w.hasLastSeq ? w.lastSeq : 0;
            if (Long.compareUnsigned(r.getSeq(), last) <= 0) {
                return new long[] {last, 1};
            }
            if (r.getSeq() != last + 1) {
                revokeAll(w);
                w.ready = false;
                w.epoch = null;
                w.hasLastSeq = false;
                throw new Precondition("event sequence gap: expected " + Long.toUnsignedString(last + 1) + ", got "
                        + Long.toUnsignedString(r.getSeq()));
            }
        }
        if (w == null && workers.size() >= maxWorkers) {
            throw new Full("at most " + maxWorkers + " workers");
        }
        long reported = 0;
        for (ExternalKvAction a : r.getActionsList()) {
            reported += a.getType() == ExternalKvActionType.ACTION_REPORT ? a.getHashesCount() : 0;
        }
        roomFor(reported);
        if (w == null) {
            w = workerOrNew(r.getWorkerId());
        }
        w.address = r.getWorkerAddress();
        w.spec = r.hasCacheSpec() ? CacheSpec.of(r.getCacheSpec()) : null;
        for (ExternalKvAction a : r.getActionsList()) {
            int tier = a.getTierValue();
            switch (a.getType()) {
                case ACTION_REPORT ->
                    reportAll(w, tier, a.getHashesList(), a.getComponentMasksList(), a.getBlockSizesList());
                case ACTION_REVOKE -> {
                    for (int i = 0; i < a.getHashesCount(); i++) {
                        revoke(w, tier, a.getHashes(i));
                    }
                }
                case ACTION_CLEAR_ALL_AT_TIER -> clearTier(w, tier);
                default -> throw new IllegalArgumentException("unchecked action type " + a.getTypeValue());
            }
        }
        w.ready = true;
        if (r.getEnforceSequence()) {
            w.epoch = r.getWorkerEpoch();
            w.lastSeq = r.getSeq();
            w.hasLastSeq = true;
        }
        return new long[] {r.getSeq(), 0};
    }

    /** Each worker holding any of {@code hashes}, in the order first met, its holdings tier by tier. */
    List<ExternalKvNodeMatch> match(long[] hashes, boolean countAsHit) {
        Map<ExternalWorker, TierHashes.Builder[]> found = new LinkedHashMap<>();
        for (long h : distinct(hashes)) {
            Block b = blocks.get(h);
            if (b == null) {
                continue;
            }
            if (countAsHit) {
                long n = hits.get(h);
                hits.put(h, n == -1L ? n : n + 1);
            }
            for (int p = 0; p < b.size; p++) {
                long placement = b.placements[p];
                ExternalWorker w = slots.get(slotOf(placement));
                TierHashes.Builder[] tiers = found.computeIfAbsent(w, x -> new TierHashes.Builder[TIERS]);
                int tier = tierOf(placement);
                if (tiers[tier] == null) {
                    tiers[tier] = TierHashes.newBuilder().setTierValue(tier);
                }
                tiers[tier].addHashes(h).addComponentMasks(maskOf(placement)).addBlockSizes(b.tokenCount);
            }
        }
        List<ExternalKvNodeMatch> out = new ArrayList<>(found.size());
        found.forEach((w, tiers) -> {
            ExternalKvNodeMatch.Builder m =
                    ExternalKvNodeMatch.newBuilder().setWorkerId(w.id).setAddress(w.address);
            for (TierHashes.Builder t : tiers) {
                if (t != null) {
                    m.addHashesByTier(t);
                }
            }
            out.add(m.build());
        });
        return out;
    }

    List<HitCountEntry> hitCounts(long[] hashes) {
        List<HitCountEntry> out = new ArrayList<>();
        for (long h : distinct(hashes)) {
            if (hits.containsKey(h)) {
                out.add(HitCountEntry.newBuilder()
                        .setHash(h)
                        .setHitCountTotal(hits.get(h))
                        .build());
            }
        }
        return out;
    }

    /**
     * Per worker holding the first block, how many leading blocks of {@code hashes} it can serve under its cache spec
     * ({@link PrefixScan}); workers without an address are left out, the longest first.
     */
    MatchExternalKvPrefixResponse matchPrefix(long[] hashes, int maxBlocks) {
        int limit = considered(hashes.length, maxBlocks);
        MatchExternalKvPrefixResponse.Builder answer = MatchExternalKvPrefixResponse.newBuilder();
        if (limit == 0) {
            return answer.build();
        }
        Block first = blocks.get(hashes[0]);
        if (first == null) {
            return answer.setBlocksRead(1).build();
        }
        PrefixScan scan = new PrefixScan(first, slots);
        List<ExternalKvPrefixMatch> matches = new ArrayList<>();
        try {
            scan.run(blocks, hashes, limit);
            for (int c = 0; c < scan.candidates.length; c++) {
                ExternalWorker w = scan.candidates[c];
                int prefix = scan.result(c);
                if (prefix > 0 && !w.address.isEmpty()) {
                    matches.add(ExternalKvPrefixMatch.newBuilder()
                            .setWorkerAddress(w.address)
                            .setMatchedPrefixBlocks(prefix)
                            .setWorkerId(w.id)
                            .build());
                }
            }
        } finally {
            scan.close();
        }
        matches.sort(PrefixAnswers.LONGEST_FIRST);
        return answer.addAllMatches(matches)
                .setBestPrefixBlocks(matches.isEmpty() ? 0 : matches.get(0).getMatchedPrefixBlocks())
                // SGLang reports the blocks considered, however early every worker's answer settled.
                .setBlocksRead(limit)
                .build();
    }

    /** Every worker as configured (address and cache spec): the first request of a state copy. */
    ConfigureExpectedWorkersRequest configuration() {
        ConfigureExpectedWorkersRequest.Builder configure = ConfigureExpectedWorkersRequest.newBuilder();
        for (ExternalWorker w : workers.values()) {
            ExpectedWorker.Builder e =
                    ExpectedWorker.newBuilder().setWorkerId(w.id).setWorkerAddress(w.address);
            if (w.spec != null) {
                e.setCacheSpec(w.spec.toProto());
            }
            configure.addWorkers(e);
        }
        return configure.build();
    }

    List<String> workerIds() {
        return List.copyOf(workers.keySet());
    }

    /**
     * One worker's part of a state copy, as the requests that make it again after {@link #configuration()}: nothing
     * when it is gone or not ready; else a snapshot replacement when it has an epoch (with its fence), then its
     * holdings in batches of reports within the contract's limits.
     */
    void stateOf(String id, Consumer<Message> out) {
        ExternalWorker w = workers.get(id);
        if (w == null || !w.ready) {
            return;
        }
        if (w.epoch != null) {
            ReplaceExternalKvSnapshotRequest.Builder r = ReplaceExternalKvSnapshotRequest.newBuilder()
                    .setWorkerId(w.id)
                    .setWorkerAddress(w.address)
                    .setWorkerEpoch(w.epoch)
                    .setAppliedSeq(w.hasLastSeq ? w.lastSeq : 0);
            if (w.spec != null) {
                r.setCacheSpec(w.spec.toProto());
            }
            out.accept(r.build());
        }
        ApplyExternalKvBatchRequest.Builder batch = reports(w);
        int hashes = 0;
        for (int tier = 1; tier < TIERS; tier++) {
            LongOpenHashSet held = w.holdings[tier];
            if (held == null) {
                continue;
            }
            ExternalKvAction.Builder action = null;
            for (LongIterator it = held.iterator(); it.hasNext(); ) {
                if (hashes == RequestChecks.MAX_HASHES_PER_REQUEST) {
                    if (action != null) {
                        batch.addActions(action);
                    }
                    out.accept(batch.build());
                    batch = reports(w);
                    hashes = 0;
                    action = null;
                }
                if (action == null) {
                    action = ExternalKvAction.newBuilder()
                            .setType(ExternalKvActionType.ACTION_REPORT)
                            .setTierValue(tier);
                }
                long hash = it.nextLong();
                Block b = blocks.get(hash);
                action.addHashes(hash)
                        .addComponentMasks(maskAt(b, w.slot, tier))
                        .addBlockSizes(b.tokenCount);
                hashes++;
            }
            if (action != null) {
                batch.addActions(action);
            }
        }
        out.accept(batch.build());
    }

    /** A batch of reports for {@code w}, outside any sequence, as a state copy sends them. */
    private static ApplyExternalKvBatchRequest.Builder reports(ExternalWorker w) {
        ApplyExternalKvBatchRequest.Builder b =
                ApplyExternalKvBatchRequest.newBuilder().setWorkerId(w.id).setWorkerAddress(w.address);
        if (w.spec != null) {
            b.setCacheSpec(w.spec.toProto());
        }
        return b;
    }

    /** The component mask of {@code slot}'s placement of block {@code b} at {@code tier}. */
    private static int maskAt(Block b, int slot, int tier) {
        int p = placementOf(b, slot, tier);
        if (p < 0) {
            throw new IllegalStateException("a worker's holding has no placement");
        }
        return maskOf(b.placements[p]);
    }

    /** Where {@code slot}'s placement of block {@code b} at {@code tier} is among its placements, or -1. */
    private static int placementOf(Block b, int slot, int tier) {
        long key = placement(slot, tier, 0);
        for (int p = 0; p < b.size; p++) {
            if ((b.placements[p] & ~MASK_BITS) == key) {
                return p;
            }
        }
        return -1;
    }

    /** Refuses a change that could add {@code more} placements past the limit. */
    private void roomFor(long more) {
        if (more > 0 && placements + more > maxPlacements) {
            throw new Full("the indexer holds " + placements + " placements of at most " + maxPlacements
                    + "; this change could add " + more);
        }
    }

    long placementCount() {
        return placements;
    }

    /**
     * How many leading blocks of {@code hashes} a prefix query considers: all, or {@code max_blocks} when that is
     * fewer. {@code max_blocks} is a u32: read unsigned, a value past 2^31 is a ceiling above any prompt, not a
     * negative one.
     */
    static int considered(int hashes, int maxBlocks) {
        return maxBlocks == 0 || Integer.compareUnsigned(maxBlocks, hashes) >= 0 ? hashes : maxBlocks;
    }

    int readyWorkers() {
        int n = 0;
        for (ExternalWorker w : workers.values()) {
            if (w.ready) {
                n++;
            }
        }
        return n;
    }

    int workerCount() {
        return workers.size();
    }

    int blockCount() {
        return blocks.size();
    }

    private ExternalWorker workerOrNew(String id) {
        ExternalWorker w = workers.get(id);
        if (w != null) {
            return w;
        }
        int slot;
        if (freeSlots.isEmpty()) {
            slot = slots.size();
            slots.add(null);
        } else {
            slot = freeSlots.popInt();
        }
        w = new ExternalWorker(id, slot);
        slots.set(slot, w);
        workers.put(id, w);
        return w;
    }

    /**
     * A REPORT's or a snapshot tier's hashes, each with its mask and token count when those lists are sent (they are
     * one per hash, or empty: whole blocks, count unknown).
     */
    private void reportAll(ExternalWorker w, int tier, List<Long> hashes, List<Integer> masks, List<Integer> sizes) {
        for (int i = 0; i < hashes.size(); i++) {
            report(
                    w,
                    tier,
                    longAt(hashes, i),
                    masks.isEmpty() ? 0 : intAt(masks, i),
                    sizes.isEmpty() ? 0 : intAt(sizes, i));
        }
    }

    /** Element {@code i}, unboxed where protobuf keeps the list primitive (as it does for every packed field). */
    static long longAt(List<Long> list, int i) {
        return list instanceof Internal.LongList longs ? longs.getLong(i) : list.get(i);
    }

    private static int intAt(List<Integer> list, int i) {
        return list instanceof Internal.IntList ints ? ints.getInt(i) : list.get(i);
    }

    /** Places (or re-places with a new mask) one block at a worker's tier. */
    private void report(ExternalWorker w, int tier, long hash, int mask, int tokens) {
        Block b = blocks.get(hash);
        if (b == null) {
            b = new Block();
            blocks.put(hash, b);
        }
        if (tokens != 0) {
            b.tokenCount = tokens;
        }
        int at = placementOf(b, w.slot, tier);
        if (at >= 0) {
            b.placements[at] = placement(w.slot, tier, mask);
            return;
        }
        if (b.size == b.placements.length) {
            b.placements = Arrays.copyOf(b.placements, b.size * 2);
        }
        b.placements[b.size++] = placement(w.slot, tier, mask);
        placements++;
        w.holdings(tier).add(hash);
    }

    private void revoke(ExternalWorker w, int tier, long hash) {
        LongOpenHashSet held = w.holdings[tier];
        if (held == null || !held.remove(hash)) {
            return;
        }
        if (held.isEmpty()) {
            w.holdings[tier] = null;
        }
        unplace(w.slot, tier, hash);
    }

    private void clearTier(ExternalWorker w, int tier) {
        LongOpenHashSet held = w.holdings[tier];
        if (held == null) {
            return;
        }
        w.holdings[tier] = null;
        for (LongIterator it = held.iterator(); it.hasNext(); ) {
            unplace(w.slot, tier, it.nextLong());
        }
    }

    private void revokeAll(ExternalWorker w) {
        for (int tier = 1; tier < TIERS; tier++) {
            clearTier(w, tier);
        }
    }

    /** Drops one placement; a block left with none goes, and its hit counter with it. */
    private void unplace(int slot, int tier, long hash) {
        Block b = blocks.get(hash);
        if (b == null) {
            return;
        }
        int at = placementOf(b, slot, tier);
        if (at >= 0) {
            b.placements[at] = b.placements[--b.size];
            placements--;
        }
        if (b.size == 0) {
            blocks.remove(hash);
            hits.remove(hash);
        }
    }

    private static long[] distinct(long[] hashes) {
        LongOpenHashSet seen = new LongOpenHashSet(hashes.length);
        LongArrayList out = new LongArrayList(hashes.length);
        for (long h : hashes) {
            if (seen.add(h)) {
                out.add(h);
            }
        }
        return out.toLongArray();
    }

    private static final long MASK_BITS = 0xFFFF_FFFFL;

    static long placement(int slot, int tier, int mask) {
        return ((long) slot << 34) | ((long) tier << 32) | (mask & MASK_BITS);
    }

    static int slotOf(long placement) {
        return (int) (placement >>> 34);
    }

    static int tierOf(long placement) {
        return (int) (placement >>> 32) & 3;
    }

    static int maskOf(long placement) {
        return (int) placement;
    }
}
