package dev.kvindexer.index;

import dev.kvindexer.hash.LocalHashes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The query walk (exact device match, docs/protocol/index.md#device-matching, then the lower-tier extension,
 * docs/protocol/index.md#lower-tier-extension-and-the-per-instance-breakdown). Scratch arrays are reused
 * between queries, so each thread that queries has its own matcher; only the answer's two columns are allocated.
 */
final class Matcher {
    /**
     * Touched owners fewer than the order's size over this are sorted by place; more than its size over
     * {@link #WIDE} read the whole order; between, their places are marked in a bitmap read in order.
     */
    private static final int NARROW = 64;

    private static final int WIDE = 2;

    private final DeviceTree tree;
    private final DeviceNodes nodes;
    private final NodeHolders holders;
    private final LowerTierIndex[] lower;
    private final OwnerTable owners;

    // Indexed by owner id; only entries of touched owners are non-zero between queries.
    private int[] gpu = new int[64];
    private int[][] ext = new int[LowerTiers.COUNT][64];
    private int[] contPos = new int[64];
    private long[] contLast = new long[64];
    private boolean[] inCont = new boolean[64];
    private int[] touched = new int[64];
    private int touchedCount;
    /** Whether this walk went on into the lower tiers: otherwise their columns are all zero and nobody reads them. */
    private boolean lowerWalked;

    // An answer's columns are filled here and copied out at their size: a copy skips zeroing the new arrays.
    private int[] places = new int[64];
    private long[] outWorkers = new long[64];
    private int[] outFields = new int[64 * OwnerMatches.FIELDS];

    /** One bit a place in the order, zero between queries. */
    private long[] placeBits = new long[1];

    private long[] active = new long[1];
    /** The depth of the last {@link #descend}. */
    private int reached;
    /** The owners left one level below {@link #active} in the walk of a wide answer; zero between queries. */
    private long[] below = new long[1];

    private final WideAnswers wide = new WideAnswers();
    private int[] path = new int[128];
    private final long[] lastOut = new long[1];

    Matcher(DeviceTree tree, LowerTierIndex[] lower, OwnerTable owners) {
        this.tree = tree;
        this.nodes = tree.nodes;
        this.holders = tree.nodes.holders;
        this.lower = lower;
        this.owners = owners;
    }

    OwnerMatches match(LocalHashes localHashes) {
        int n = localHashes.length();
        if (n == 0) {
            return OwnerMatches.NONE;
        }
        ensureCapacity(owners.idLimit(), n);
        boolean anyLower = false;
        for (LowerTierIndex t : lower) {
            anyLower |= t != null && t.edgeCount() > 0;
        }
        if (!anyLower) {
            OwnerMatches fromWide = wideMatch(localHashes);
            if (fromWide != null) {
                return fromWide;
            }
        }
        walkDevice(localHashes, anyLower);
        if (anyLower) {
            extendLower(localHashes);
        }
        return collect();
    }

    /**
     * A device-only answer whose first block has at least {@link WideAnswers#WIDE_OWNERS} owners, built from the kept
     * answer to the prompt's wide start and the few owners that go deeper; null when the first block is not that
     * wide. The levels are read as {@link #walkDevice} reads them, so the answer is the same.
     */
    private OwnerMatches wideMatch(LocalHashes localHashes) {
        int node = nodes.child(DeviceNodes.ROOT, localHashes.at(0));
        if (node == DeviceTree.NONE) {
            return null;
        }
        int words = Math.min(holders.wordCount(node), active.length);
        if (words << 6 < WideAnswers.WIDE_OWNERS) {
            return null;
        }
        long[] act = active;
        long[] next = below;
        if (holders.wordsInto(node, null, act, words) < WideAnswers.WIDE_OWNERS) {
            Arrays.fill(act, 0, words, 0L);
            return null;
        }
        int version = owners.order().version;
        WideAnswers.Entry kept = wide.startingAt(node, version);
        boolean agrees = kept != null && kept.agrees(0, node, act, words);
        int n = localHashes.length();
        int level = 0;
        int child = DeviceTree.NONE;
        int deep = 0;
        while (level + 1 < n) {
            child = nodes.child(node, localHashes.at(level + 1));
            if (child == DeviceTree.NONE) {
                break;
            }
            deep = holders.wordsInto(child, act, next, words);
            if (deep < WideAnswers.WIDE_OWNERS) {
                break;
            }
            long[] t = act;
            act = next;
            next = t;
            level++;
            node = child;
            agrees = agrees && kept.agrees(level, node, act, words);
            child = DeviceTree.NONE;
            deep = 0;
        }
        // act: the owners left at the last wide level; next: those of them that go on to child (deep of them).
        Arrays.fill(act, 0, words, 0L);
        boolean fromKept = agrees && kept.path.length == level + 1;
        wide.answered(fromKept);
        if (!fromKept && !wide.mayKeep()) {
            Arrays.fill(next, 0, words, 0L);
            return null;
        }
        if (!fromKept) {
            // Keeping a new answer walks with the scratch arrays: the few deeper owners wait in a copy.
            long[] deeper = Arrays.copyOf(next, words);
            Arrays.fill(next, 0, words, 0L);
            kept = keep(localHashes, level + 1, words, version, kept);
            next = deeper;
        }
        int end = node;
        if (deep > 0) {
            end = deepen(localHashes, level + 1, child, next, words);
        }
        Arrays.fill(next, 0, words, 0L);
        tree.touch(end);
        // The kept answer gives every owner left at the last wide level its depth; the deeper ones are patched in
        // (a shared store among them has no place in the order, so none in the answer).
        int[] f = kept.fields;
        if (touchedCount > 0) {
            // The kept answer's columns are shared by the answers built from it: the deeper owners go into a copy.
            f = Arrays.copyOf(f, kept.size * OwnerMatches.FIELDS);
            patch(f, kept.position, owners.order().place);
        }
        OwnerMatches answer = OwnerMatches.sharing(kept.size, kept.workers, kept.starts, f);
        reset();
        return answer;
    }

    /** Writes the touched owners' scores into a copy of the kept answer's fields. */
    private void patch(int[] fields, int[] position, int[] place) {
        for (int i = 0; i < touchedCount; i++) {
            int id = touched[i];
            if (id >= place.length || place[id] < 0) {
                continue;
            }
            int reach = gpu[id];
            int at = position[id] * OwnerMatches.FIELDS;
            fields[at + OwnerMatches.GPU] = reach;
            fields[at + OwnerMatches.CPU] = reach;
            fields[at + OwnerMatches.DISK] = reach;
        }
    }

    /**
     * The walk on from {@code node}, block {@code at} of the prompt, with the few owners {@code left} there: their
     * depths go into the scores as {@link #walkDevice} gives them. Returns the deepest node reached.
     */
    private int deepen(LocalHashes localHashes, int at, int node, long[] left, int words) {
        touchAll(left, words);
        int end = descend(localHashes, at + 1, node, left, words, false);
        scoreLeft(left, words, reached);
        return end;
    }

    /** Every owner still in {@code left} reached {@code depth}; {@code left} is left zero. */
    private void scoreLeft(long[] left, int words, int depth) {
        int[] score = gpu;
        for (int w = 0; w < words; w++) {
            for (long bits = left[w]; bits != 0; bits &= bits - 1) {
                score[(w << 6) + Long.numberOfTrailingZeros(bits)] = depth;
            }
            left[w] = 0;
        }
    }

    /**
     * The descent past a first level of more than 64 owners: from {@code node} (the prompt's first {@code from}
     * blocks matched) with the owners {@code left} there, each owner that drops out scores the depth it reached.
     * Returns the deepest node any owner reached, its depth in {@link #reached}; {@code left} keeps those still there.
     */
    private int descend(LocalHashes localHashes, int from, int node, long[] left, int words, boolean keepPath) {
        int[] score = gpu;
        int depth = from;
        for (int i = from; i < localHashes.length(); i++) {
            int child = nodes.child(node, localHashes.at(i));
            if (child == DeviceTree.NONE) {
                break;
            }
            long any = 0;
            for (int w = 0; w < words; w++) {
                long a = left[w];
                if (a == 0) {
                    continue;
                }
                long c = a & holders.word(child, w);
                for (long dropped = a & ~c; dropped != 0; dropped &= dropped - 1) {
                    score[(w << 6) + Long.numberOfTrailingZeros(dropped)] = depth;
                }
                left[w] = c;
                any |= c;
            }
            if (any == 0) {
                break;
            }
            node = child;
            depth = i + 1;
            if (keepPath) {
                path[i] = node;
            }
        }
        reached = depth;
        return node;
    }

    /**
     * Keeps the answer to the prompt cut after {@code levels} blocks (its wide start), with each level's node and
     * owners left, in {@code kept} when it starts at the same node, else in another entry.
     */
    private WideAnswers.Entry keep(
            LocalHashes localHashes, int levels, int words, int version, WideAnswers.Entry kept) {
        WideAnswers.Entry e = wide.replace(kept);
        long[] act = new long[words];
        int node = nodes.child(DeviceNodes.ROOT, localHashes.at(0));
        holders.wordsInto(node, null, act, words);
        e.level(0, node, act, words);
        for (int level = 1; level < levels; level++) {
            node = nodes.child(node, localHashes.at(level));
            holders.wordsInto(node, act, act, words);
            e.level(level, node, act, words);
        }
        e.cut(levels);
        walkDevice(localHashes.head(levels), false);
        int[] position = e.position.length >= gpu.length ? e.position : new int[gpu.length];
        OwnerMatches cut = collect(position);
        e.answer(cut.size(), outWorkers, outFields, position, version);
        return e;
    }

    /**
     * The device walk: one method on purpose, though longer than the others. Split into its steps (the first
     * block's holders, the descent, the scores at the end), the cache-resident walk measured slower: the locals the
     * descent keeps in registers then travel through fields. Past 64 owners the descent is {@link #descend}, shared
     * with the walk below a wide answer's start.
     */
    private void walkDevice(LocalHashes localHashes, boolean keepPath) {
        DeviceNodes nodes = this.nodes;
        NodeHolders holders = this.holders;
        int node = nodes.child(DeviceNodes.ROOT, localHashes.at(0));
        if (node == DeviceTree.NONE) {
            return;
        }
        // Words past the id limit are zero (released owners left every node), so capping is exact.
        int words = Math.min(holders.wordCount(node), active.length);
        long[] act = active;
        holders.wordsInto(node, null, act, words);
        touchAll(act, words);
        if (keepPath) {
            path[0] = node;
        }
        int depth = 1;
        int n = localHashes.length();
        int[] score = gpu;
        if (words == 1) {
            // Up to 64 owners: the holder intersection is one AND per level.
            long a = act[0];
            for (int i = 1; i < n; i++) {
                int child = nodes.child(node, localHashes.at(i));
                if (child == DeviceTree.NONE) {
                    break;
                }
                long c = holders.word0(child);
                long dropped = a & ~c;
                while (dropped != 0) {
                    score[Long.numberOfTrailingZeros(dropped)] = depth;
                    dropped &= dropped - 1;
                }
                a &= c;
                if (a == 0) {
                    break;
                }
                node = child;
                depth = i + 1;
                if (keepPath) {
                    path[i] = node;
                }
            }
            act[0] = a;
        } else {
            node = descend(localHashes, 1, node, act, words, keepPath);
            depth = reached;
        }
        scoreLeft(act, words, depth);
        tree.touch(node);
    }

    /**
     * The walk of {@link #match} kept tier by tier (docs/api/dynamo.md#post-query_tiered_by_hash): device depths, then per existing lower-tier index
     * the extension of every owner in its continuation, zeros included.
     */
    TieredMatch matchTiered(LocalHashes localHashes) {
        ensureCapacity(owners.idLimit(), Math.max(localHashes.length(), 1));
        List<TieredMatch.Tier> tiers = new ArrayList<>();
        TieredMatch.Owners device;
        if (localHashes.length() == 0) {
            device = columns(new int[0], new int[0]);
            for (int slot = 0; slot < LowerTiers.COUNT; slot++) {
                if (lower[slot] != null) {
                    tiers.add(new TieredMatch.Tier(LowerTiers.tier(slot), device));
                }
            }
            return new TieredMatch(device, tiers);
        }
        walkDevice(localHashes, true);
        int[] ids = new int[touchedCount];
        int[] blocks = new int[touchedCount];
        int n = 0;
        for (int i = 0; i < touchedCount; i++) {
            int id = touched[i];
            if (gpu[id] > 0 && !owners.byId(id).store) {
                ids[n] = id;
                blocks[n++] = gpu[id];
            }
        }
        device = columns(Arrays.copyOf(ids, n), Arrays.copyOf(blocks, n));
        extendLower(localHashes, (slot, tierExt) -> {
            int[] tierIds = new int[touchedCount];
            int[] hits = new int[touchedCount];
            int k = 0;
            for (int i = 0; i < touchedCount; i++) {
                int id = touched[i];
                if (!owners.byId(id).store) {
                    tierIds[k] = id;
                    hits[k++] = tierExt[id];
                }
            }
            tiers.add(new TieredMatch.Tier(
                    LowerTiers.tier(slot), columns(Arrays.copyOf(tierIds, k), Arrays.copyOf(hits, k))));
        });
        reset();
        return new TieredMatch(device, tiers);
    }

    /** Ordinary owners' ids and their counts as (worker, rank) columns in answer order. */
    private TieredMatch.Owners columns(int[] ids, int[] counts) {
        OwnerOrder order = owners.order();
        // Place in the high half, index in the low: one primitive sort orders the entries.
        long[] keyed = new long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            keyed[i] = ((long) order.place[ids[i]] << 32) | i;
        }
        Arrays.sort(keyed);
        long[] workers = new long[ids.length];
        int[] ranks = new int[ids.length];
        int[] sorted = new int[ids.length];
        for (int i = 0; i < keyed.length; i++) {
            int p = (int) (keyed[i] >>> 32);
            workers[i] = order.workers[p];
            ranks[i] = order.ranks[p];
            sorted[i] = counts[(int) keyed[i]];
        }
        return new TieredMatch.Owners(workers, ranks, sorted);
    }

    /** Sees each lower-tier index's extensions once its slot is walked (tiered answers only). */
    @FunctionalInterface
    private interface TierRecorder {
        void tier(int slot, int[] tierExt);
    }

    private void extendLower(LocalHashes localHashes) {
        extendLower(localHashes, null);
    }

    private void extendLower(LocalHashes localHashes, TierRecorder recorder) {
        lowerWalked = true;
        // Owners with a device score continue from their own engine hash at their matched depth.
        for (int i = 0; i < touchedCount; i++) {
            int id = touched[i];
            int g = gpu[id];
            inCont[id] = true;
            contPos[id] = g;
            contLast[id] = tree.hashOf(path[g - 1], id);
        }
        for (int slot = 0; slot < LowerTiers.COUNT; slot++) {
            LowerTierIndex t = lower[slot];
            if (t == null) {
                continue;
            }
            if (t.edgeCount() == 0) {
                if (recorder != null) {
                    recorder.tier(slot, ext[slot]);
                }
                continue;
            }
            LowerEdge rootEdge = t.rootEdge(localHashes.at(0));
            if (rootEdge != null) {
                int words = rootEdge.wordCount();
                for (int w = 0; w < words; w++) {
                    long bits = rootEdge.word(w);
                    while (bits != 0) {
                        int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                        bits &= bits - 1;
                        if (!inCont[id] && !owners.byId(id).store) {
                            touch(id);
                            inCont[id] = true;
                            contPos[id] = 0;
                        }
                    }
                }
            }
            int[] tierExt = ext[slot];
            for (int i = 0; i < touchedCount; i++) {
                int id = touched[i];
                int pos = contPos[id];
                int k = t.extend(id, pos > 0, contLast[id], localHashes, pos, lastOut);
                if (k > 0) {
                    tierExt[id] = k;
                    contPos[id] = pos + k;
                    contLast[id] = lastOut[0];
                }
            }
            if (recorder != null) {
                recorder.tier(slot, tierExt);
            }
        }
    }

    /** The shared store owners' reach from the root, cumulative over the tiers in walk order: {cpu, disk}. */
    int[] sharedReach(LocalHashes localHashes) {
        int pos = 0;
        boolean hasLast = false;
        long last = 0;
        int[] ext = new int[LowerTiers.COUNT];
        for (int slot = 0; slot < LowerTiers.COUNT; slot++) {
            LowerTierIndex t = lower[slot];
            if (t == null || t.edgeCount() == 0) {
                continue;
            }
            int k = t.extendShared(hasLast, last, localHashes, pos, lastOut);
            if (k > 0) {
                ext[slot] = k;
                pos += k;
                last = lastOut[0];
                hasLast = true;
            }
        }
        int cpu = ext[0];
        return new int[] {cpu, cpu + ext[1] + ext[2]};
    }

    /**
     * The touched owners with a reach, in answer order: a wide answer reads the whole order once, a narrow one sorts
     * its owners' places in it.
     */
    private OwnerMatches collect() {
        return collect(null);
    }

    /** {@link #collect()}, noting each answered owner's entry in {@code positionById} when it is given. */
    private OwnerMatches collect(int[] positionById) {
        OwnerOrder order = owners.order();
        int[] ids = order.ids;
        long[] workers = order.workers;
        int[] ranks = order.ranks;
        int[] host = ext[0];
        int[] disk = ext[1];
        int[] external = ext[2];
        int[] at = places;
        // Without a lower-tier walk their columns are all zero: the device depth is every tier's reach.
        boolean lower = lowerWalked;
        int count = order.size;
        boolean wide = touchedCount * WIDE > count;
        if (!wide) {
            count = touchedCount * NARROW < count ? sortedPlaces(order.place) : markedPlaces(order.place, count);
        }
        long[] outW = outWorkers;
        int[] outF = outFields;
        int n = 0;
        for (int k = 0; k < count; k++) {
            int p = wide ? k : at[k];
            int id = ids[p];
            int g = gpu[id];
            int c = g;
            int d = g;
            if (lower) {
                c += host[id];
                d = c + disk[id] + external[id];
            }
            if (d > 0) {
                if (positionById != null) {
                    positionById[id] = n;
                }
                outW[n] = workers[p];
                int f = n * OwnerMatches.FIELDS;
                outF[f] = ranks[p];
                outF[f + OwnerMatches.GPU] = g;
                outF[f + OwnerMatches.CPU] = c;
                outF[f + OwnerMatches.DISK] = d;
                n++;
            }
        }
        reset();
        return OwnerMatches.orderedCopyOf(n, outW, outF);
    }

    /** The touched owners' places in the order, ascending, into {@link #places}; answers how many. */
    private int sortedPlaces(int[] place) {
        int[] at = places;
        int count = 0;
        for (int i = 0; i < touchedCount; i++) {
            int p = place[touched[i]];
            if (p >= 0) {
                at[count++] = p;
            }
        }
        Arrays.sort(at, 0, count);
        return count;
    }

    /**
     * The same as {@link #sortedPlaces} for more owners: each place marked in a bitmap of the order's {@code size},
     * read back in order, and cleared as it is read.
     */
    private int markedPlaces(int[] place, int size) {
        int words = (size + 63) >>> 6;
        if (placeBits.length < words) {
            placeBits = new long[Math.max(words, placeBits.length * 2)];
        }
        long[] bits = placeBits;
        for (int i = 0; i < touchedCount; i++) {
            int p = place[touched[i]];
            if (p >= 0) {
                bits[p >>> 6] |= 1L << p;
            }
        }
        int[] at = places;
        int count = 0;
        for (int w = 0; w < words; w++) {
            long b = bits[w];
            if (b == 0) {
                continue;
            }
            bits[w] = 0;
            while (b != 0) {
                at[count++] = (w << 6) + Long.numberOfTrailingZeros(b);
                b &= b - 1;
            }
        }
        return count;
    }

    /** Leaves the scratch arrays zero for the next query, touching only what this one touched. */
    private void reset() {
        boolean lowerToo = lowerWalked;
        for (int i = 0; i < touchedCount; i++) {
            int id = touched[i];
            gpu[id] = 0;
            if (lowerToo) {
                for (int[] tierExt : ext) {
                    tierExt[id] = 0;
                }
                inCont[id] = false;
            }
        }
        touchedCount = 0;
        lowerWalked = false;
    }

    private void touch(int id) {
        touched[touchedCount++] = id;
    }

    /** Touches every owner in the first {@code words} words of {@code owners}. */
    private void touchAll(long[] owners, int words) {
        for (int w = 0; w < words; w++) {
            for (long bits = owners[w]; bits != 0; bits &= bits - 1) {
                touch((w << 6) + Long.numberOfTrailingZeros(bits));
            }
        }
    }

    private void ensureCapacity(int ids, int queryLength) {
        if (ids > gpu.length) {
            int cap = Math.max(ids, gpu.length * 2);
            gpu = new int[cap];
            for (int s = 0; s < LowerTiers.COUNT; s++) {
                ext[s] = new int[cap];
            }
            contPos = new int[cap];
            contLast = new long[cap];
            inCont = new boolean[cap];
            touched = new int[cap];
            places = new int[cap];
            outWorkers = new long[cap];
            outFields = new int[cap * OwnerMatches.FIELDS];
        }
        int words = (Math.max(ids, 1) + 63) >>> 6;
        if (words > active.length) {
            active = new long[words];
            below = new long[words];
        }
        if (queryLength > path.length) {
            path = new int[Math.max(queryLength, path.length * 2)];
        }
    }
}
