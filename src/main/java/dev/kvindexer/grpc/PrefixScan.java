package dev.kvindexer.grpc;

import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.util.Arrays;
import java.util.List;

/**
 * One {@code MatchExternalKvPrefix} walk: for each worker holding the prompt's first block, the longest prefix it can
 * serve. A worker without a cache spec serves the blocks it holds in any tier, up to its first missing one, unless a
 * block it holds carries component detail (then nothing: it sent masks it did not declare). A worker with a usable
 * spec serves up to the last block N where FULL is present on every block to N at a servable tier, SWA covers an
 * unbroken run ending at N of at least its window (or reaching back to the first block), and MAMBA is on block N.
 * Each block's placements are read once for all workers.
 */
final class PrefixScan {
    private static final int LEGACY = 0;
    private static final int UNUSABLE = 1;
    private static final int COMPONENTS = 2;

    final ExternalWorker[] candidates;
    private final int[] mode;
    /** slot → candidate index, or -1 (the thread's table: {@link #close} clears what this scan wrote). */
    private final int[] bySlot;
    /** The block at which a candidate was last seen holding something, and what it could serve there. */
    private final int[] seenAt;

    private final int[] available;
    private final int[] prefix;
    private final boolean[] live;
    private final boolean[] failedClosed;
    private final long[] swaRun;
    private final boolean[] swaHeadBroken;

    /**
     * slot → candidate index, per thread and kept between scans, all -1 but for the scan under way: a scan costs what
     * its candidates cost, not what the number of workers does.
     */
    private static final ThreadLocal<int[][]> SLOT_TABLE = ThreadLocal.withInitial(() -> new int[][] {new int[0]});

    PrefixScan(ExternalKvIndex.Block first, List<ExternalWorker> slots) {
        int[][] holder = SLOT_TABLE.get();
        if (holder[0].length < slots.size()) {
            int[] grown = new int[Math.max(slots.size(), 2 * holder[0].length)];
            Arrays.fill(grown, -1);
            holder[0] = grown;
        }
        bySlot = holder[0];
        ExternalWorker[] found = new ExternalWorker[first.size];
        int n = 0;
        for (int p = 0; p < first.size; p++) {
            int slot = ExternalKvIndex.slotOf(first.placements[p]);
            if (bySlot[slot] < 0) {
                bySlot[slot] = n;
                found[n++] = slots.get(slot);
            }
        }
        candidates = Arrays.copyOf(found, n);
        mode = new int[n];
        seenAt = new int[n];
        Arrays.fill(seenAt, -1);
        available = new int[n];
        prefix = new int[n];
        live = new boolean[n];
        failedClosed = new boolean[n];
        swaRun = new long[n];
        swaHeadBroken = new boolean[n];
        for (int c = 0; c < n; c++) {
            CacheSpec spec = candidates[c].spec;
            mode[c] = spec == null ? LEGACY : spec.usable() ? COMPONENTS : UNUSABLE;
            live[c] = mode[c] != UNUSABLE;
        }
    }

    /** Walks at most {@code limit} blocks, stopping once no later block can change an answer. */
    void run(Long2ObjectOpenHashMap<ExternalKvIndex.Block> blocks, long[] hashes, int limit) {
        int k = 0;
        while (k < limit && stillOpen()) {
            ExternalKvIndex.Block b = blocks.get(hashes[k]);
            if (b != null) {
                see(b, k);
            }
            for (int c = 0; c < candidates.length; c++) {
                if (live[c]) {
                    step(c, seenAt[c] == k ? available[c] : -1, b == null ? 0 : b.tokenCount, k);
                }
            }
            k++;
        }
    }

    /** Leaves the thread's slot table as it found it: all -1. */
    void close() {
        for (ExternalWorker w : candidates) {
            bySlot[w.slot] = -1;
        }
    }

    int result(int c) {
        return switch (mode[c]) {
            case LEGACY -> failedClosed[c] ? 0 : prefix[c];
            case COMPONENTS -> prefix[c];
            default -> 0;
        };
    }

    /** Whether a later block can still change some candidate's answer. */
    private boolean stillOpen() {
        for (int c = 0; c < candidates.length; c++) {
            if (live[c] || (mode[c] == LEGACY && prefix[c] > 0 && !failedClosed[c])) {
                return true;
            }
        }
        return false;
    }

    private void see(ExternalKvIndex.Block b, int k) {
        for (int p = 0; p < b.size; p++) {
            long placement = b.placements[p];
            int slot = ExternalKvIndex.slotOf(placement);
            int c = slot < bySlot.length ? bySlot[slot] : -1;
            if (c < 0) {
                continue;
            }
            if (seenAt[c] != k) {
                seenAt[c] = k;
                available[c] = 0;
            }
            int mask = ExternalKvIndex.maskOf(placement);
            if (mode[c] == LEGACY) {
                failedClosed[c] |= mask != 0;
                continue;
            }
            CacheSpec spec = candidates[c].spec;
            int tierBit = 1 << ExternalKvIndex.tierOf(placement);
            for (int component = ExternalKvIndex.FULL; component <= ExternalKvIndex.MAMBA; component <<= 1) {
                if ((mask & component) != 0 && (spec.servableTiers(component) & tierBit) != 0) {
                    available[c] |= component;
                }
            }
        }
    }

    /** One block for one candidate: {@code held} is what it can serve there, or -1 when it holds nothing. */
    private void step(int c, int held, int tokens, int k) {
        if (mode[c] == LEGACY) {
            if (held < 0) {
                live[c] = false;
            } else {
                prefix[c] = k + 1;
            }
            return;
        }
        int can = Math.max(held, 0);
        if ((can & ExternalKvIndex.FULL) == 0) {
            live[c] = false;
            return;
        }
        CacheSpec spec = candidates[c].spec;
        boolean ok = true;
        if (spec.has(ExternalKvIndex.SWA)) {
            if ((can & ExternalKvIndex.SWA) != 0) {
                swaRun[c] += Integer.toUnsignedLong(tokens);
                ok = !swaHeadBroken[c] || swaRun[c] >= Integer.toUnsignedLong(spec.swaWindowTokens());
            } else {
                swaRun[c] = 0;
                swaHeadBroken[c] = true;
                ok = false;
            }
        }
        if (spec.has(ExternalKvIndex.MAMBA)) {
            ok &= (can & ExternalKvIndex.MAMBA) != 0;
        }
        if (ok) {
            prefix[c] = k + 1;
        }
    }
}
