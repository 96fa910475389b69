package dev.kvindexer.index;

import it.unimi.dsi.fastutil.ints.IntArrays;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The per-instance tier breakdown of docs/protocol/index.md#lower-tier-extension-and-the-per-instance-breakdown and the
 * legacy {@code scores} view, in tokens, built from per-owner matches. Instances are ordered by worker id as unsigned,
 * ranks ascending.
 *
 * <p>Kept as columns: a prompt that every engine holds a prefix of answers one instance per engine, and renderers read
 * the columns; {@link #instances()} and {@link #scores()} give records for callers that want them.
 */
public final class TierBreakdown {

    /** One instance's breakdown; {@code dpRanks[i]} has {@code dpTokens[i]} device tokens. */
    public record InstanceBreakdown(
            long workerId, long longestMatched, long gpu, int[] dpRanks, long[] dpTokens, long cpu, long disk) {
        /** Device tokens of one rank, or -1 when the rank has no entry. */
        public long dp(int rank) {
            int i = Arrays.binarySearch(dpRanks, rank);
            return i < 0 ? -1 : dpTokens[i];
        }

        @Override
        public boolean equals(Object other) {
            if (!(other instanceof InstanceBreakdown b)) {
                return false;
            }
            return workerId == b.workerId
                    && longestMatched == b.longestMatched
                    && gpu == b.gpu
                    && cpu == b.cpu
                    && disk == b.disk
                    && Arrays.equals(dpRanks, b.dpRanks)
                    && Arrays.equals(dpTokens, b.dpTokens);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(workerId) * 31 + Long.hashCode(longestMatched) * 17 + Arrays.hashCode(dpTokens);
        }

        @Override
        public String toString() {
            StringBuilder dp = new StringBuilder("{");
            for (int i = 0; i < dpRanks.length; i++) {
                dp.append(i == 0 ? "" : ", ").append(dpRanks[i]).append(':').append(dpTokens[i]);
            }
            return "Instance[" + Long.toUnsignedString(workerId) + " longest_matched=" + longestMatched + " gpu=" + gpu
                    + " dp=" + dp.append('}') + " cpu=" + cpu + " disk=" + disk + "]";
        }
    }

    /** Legacy device-tier score of one (worker, dp_rank), in tokens. */
    public record Score(long workerId, int dpRank, long tokens) {}

    /** One entry per (worker, rank): duplicates in the input are merged, each field its largest. */
    private final OwnerMatches owners;
    /** The owners' order by (worker unsigned, rank), or null when they came in that order. */
    private final int[] order;

    private final long blockSize;
    private final int instanceCount;
    /** Instance {@code k}'s owners are positions {@code start[k] .. start[k + 1] - 1} in that order. */
    private final int[] start;

    private List<InstanceBreakdown> instances;

    private TierBreakdown(OwnerMatches given, int blockSize) {
        this.blockSize = blockSize;
        // A partition's answer comes in order without duplicates and says so (an answer built from a kept wide one
        // shares the instances found once for it), or one pass checks that and finds the instances.
        int[] known = given.instanceStarts();
        if (known != null) {
            owners = given;
            order = null;
            start = known;
            instanceCount = known.length - 1;
            return;
        }
        int n = given.size();
        start = new int[n + 1];
        int count = orderedInstances(given, start);
        if (count >= 0) {
            this.owners = given;
            this.order = null;
        } else {
            int[] givenOrder = orderOf(given);
            OwnerMatches merged = mergedDuplicates(given, givenOrder);
            this.owners = merged == null ? given : merged;
            this.order = merged == null ? givenOrder : null;
            n = owners.size();
            count = 0;
            for (int j = 0; j < n; j++) {
                if (j == 0 || owners.workerId(at(j)) != owners.workerId(at(j - 1))) {
                    start[count++] = j;
                }
            }
        }
        start[count] = n;
        instanceCount = count;
    }

    /**
     * The instances' first positions into {@code start} and their count, or -1 when the owners are not in (worker
     * unsigned, rank) order or name one (worker, rank) twice.
     */
    private static int orderedInstances(OwnerMatches m, int[] start) {
        int n = m.size();
        int count = 0;
        long worker = 0;
        int rank = 0;
        for (int j = 0; j < n; j++) {
            long w = m.workerId(j);
            int r = m.dpRank(j);
            if (j == 0 || w != worker) {
                if (j > 0 && Long.compareUnsigned(worker, w) > 0) {
                    return -1;
                }
                start[count++] = j;
            } else if (rank >= r) {
                return -1;
            }
            worker = w;
            rank = r;
        }
        return count;
    }

    /**
     * Every owner given becomes a dp entry of its instance, zeros included (that is how "expected" owners are
     * reported); the caller decides which owners to pass.
     */
    public static TierBreakdown of(OwnerMatches matches, int blockSize) {
        return new TierBreakdown(matches, blockSize);
    }

    public static TierBreakdown of(List<OwnerMatch> matches, int blockSize) {
        return new TierBreakdown(OwnerMatches.of(matches), blockSize);
    }

    /** Null when the owners are already in (worker unsigned, rank) order, as a partition's usually are. */
    private static int[] orderOf(OwnerMatches m) {
        int n = m.size();
        int i = 1;
        while (i < n && compare(m, i - 1, i) <= 0) {
            i++;
        }
        if (i >= n) {
            return null;
        }
        int[] order = new int[n];
        for (int k = 0; k < n; k++) {
            order[k] = k;
        }
        IntArrays.mergeSort(order, (a, b) -> compare(m, a, b));
        return order;
    }

    /** The owners in order with each run of one (worker, rank) merged, or null when there is no such run. */
    private static OwnerMatches mergedDuplicates(OwnerMatches m, int[] order) {
        int n = m.size();
        boolean any = false;
        for (int j = 1; j < n && !any; j++) {
            any = compare(m, at(order, j - 1), at(order, j)) == 0;
        }
        if (!any) {
            return null;
        }
        OwnerMatches.Builder out = OwnerMatches.builder(n);
        for (int j = 0; j < n; ) {
            int i = at(order, j);
            int gpu = m.gpuBlocks(i);
            int cpu = m.cpuBlocks(i);
            int disk = m.diskBlocks(i);
            int k = j + 1;
            for (; k < n && compare(m, i, at(order, k)) == 0; k++) {
                int d = at(order, k);
                gpu = Math.max(gpu, m.gpuBlocks(d));
                cpu = Math.max(cpu, m.cpuBlocks(d));
                disk = Math.max(disk, m.diskBlocks(d));
            }
            out.add(m.workerId(i), m.dpRank(i), gpu, cpu, disk);
            j = k;
        }
        return out.build();
    }

    private static int compare(OwnerMatches m, int a, int b) {
        int c = Long.compareUnsigned(m.workerId(a), m.workerId(b));
        return c != 0 ? c : Integer.compare(m.dpRank(a), m.dpRank(b));
    }

    private static int at(int[] order, int j) {
        return order == null ? j : order[j];
    }

    private int at(int j) {
        return at(order, j);
    }

    public int instanceCount() {
        return instanceCount;
    }

    public long workerId(int instance) {
        return owners.workerId(at(start[instance]));
    }

    public long longestMatched(int instance) {
        return Math.max(gpu(instance), Math.max(cpu(instance), disk(instance)));
    }

    /** The instance's deepest device match over its ranks, in tokens. */
    public long gpu(int instance) {
        return most(instance, OwnerMatches.GPU);
    }

    public long cpu(int instance) {
        return most(instance, OwnerMatches.CPU);
    }

    public long disk(int instance) {
        return most(instance, OwnerMatches.DISK);
    }

    /** The instance's largest reach in one tier over its ranks, in tokens. */
    private long most(int instance, int tier) {
        int most = 0;
        for (int j = start[instance]; j < start[instance + 1]; j++) {
            most = Math.max(most, owners.field(at(j), tier));
        }
        return most * blockSize;
    }

    /**
     * The instance's first dp entry; its entries run to {@code dpFrom(instance + 1)}. Entries are the owners in
     * instance order, one per (worker, rank): the {@code scores} view is those with a device block.
     */
    public int dpFrom(int instance) {
        return start[instance];
    }

    /** Owners (dp entries) over all instances. */
    public int ownerCount() {
        return owners.size();
    }

    public long ownerWorkerId(int entry) {
        return owners.workerId(at(entry));
    }

    public int dpRank(int entry) {
        return owners.dpRank(at(entry));
    }

    /** Device tokens of one dp entry; 0 means it has no score. */
    public long dpTokens(int entry) {
        return owners.gpuBlocks(at(entry)) * blockSize;
    }

    public List<InstanceBreakdown> instances() {
        if (instances == null) {
            List<InstanceBreakdown> out = new ArrayList<>(instanceCount);
            for (int k = 0; k < instanceCount; k++) {
                int[] ranks = new int[start[k + 1] - start[k]];
                long[] tokens = new long[ranks.length];
                for (int r = 0; r < ranks.length; r++) {
                    ranks[r] = dpRank(start[k] + r);
                    tokens[r] = dpTokens(start[k] + r);
                }
                out.add(new InstanceBreakdown(workerId(k), longestMatched(k), gpu(k), ranks, tokens, cpu(k), disk(k)));
            }
            instances = Collections.unmodifiableList(out);
        }
        return instances;
    }

    /** The instance's breakdown, or null when it has no entry. */
    public InstanceBreakdown instance(long workerId) {
        for (InstanceBreakdown b : instances()) {
            if (b.workerId() == workerId) {
                return b;
            }
        }
        return null;
    }

    /** Owners with at least one device block, tokens = gpu blocks × block size, ordered like instances. */
    public List<Score> scores() {
        List<Score> out = new ArrayList<>();
        for (int j = 0; j < ownerCount(); j++) {
            long tokens = dpTokens(j);
            if (tokens > 0) {
                out.add(new Score(ownerWorkerId(j), dpRank(j), tokens));
            }
        }
        return Collections.unmodifiableList(out);
    }
}
