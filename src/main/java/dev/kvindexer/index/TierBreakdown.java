package dev.kvindexer.index;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

/**
 * The per-instance tier breakdown of docs/protocol/index.md#lower-tier-extension-and-the-per-instance-breakdown and the
 * legacy {@code scores} view, in tokens, built from
 * per-owner matches. Instances are ordered by worker id as unsigned, ranks ascending.
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

    private static final Comparator<OwnerMatch> ORDER = (a, b) -> {
        int c = Long.compareUnsigned(a.workerId(), b.workerId());
        return c != 0 ? c : Integer.compare(a.dpRank(), b.dpRank());
    };

    private final List<InstanceBreakdown> instances;
    private final List<Score> scores;

    private TierBreakdown(List<InstanceBreakdown> instances, List<Score> scores) {
        this.instances = instances;
        this.scores = scores;
    }

    /**
     * Every owner given becomes a dp entry of its instance, zeros included (that is how "expected" owners
     * are reported); the caller decides which owners to pass.
     */
    public static TierBreakdown of(List<OwnerMatch> matches, int blockSize) {
        List<OwnerMatch> sorted = new ArrayList<>(matches);
        sorted.sort(ORDER);
        List<InstanceBreakdown> instances = new ArrayList<>();
        List<Score> scores = new ArrayList<>();
        long bs = blockSize;
        int i = 0;
        while (i < sorted.size()) {
            long worker = sorted.get(i).workerId();
            int j = i;
            while (j < sorted.size() && sorted.get(j).workerId() == worker) {
                j++;
            }
            int[] ranks = new int[j - i];
            long[] tokens = new long[j - i];
            int ranksUsed = 0;
            long gpu = 0;
            long cpu = 0;
            long disk = 0;
            for (int k = i; k < j; k++) {
                OwnerMatch m = sorted.get(k);
                long g = m.gpuBlocks() * bs;
                if (ranksUsed > 0 && ranks[ranksUsed - 1] == m.dpRank()) {
                    tokens[ranksUsed - 1] = Math.max(tokens[ranksUsed - 1], g); // duplicate owner in the input
                } else {
                    ranks[ranksUsed] = m.dpRank();
                    tokens[ranksUsed++] = g;
                }
                gpu = Math.max(gpu, g);
                cpu = Math.max(cpu, m.cpuBlocks() * bs);
                disk = Math.max(disk, m.diskBlocks() * bs);
                if (m.gpuBlocks() >= 1) {
                    scores.add(new Score(worker, m.dpRank(), g));
                }
            }
            long longest = Math.max(gpu, Math.max(cpu, disk));
            instances.add(new InstanceBreakdown(
                    worker,
                    longest,
                    gpu,
                    Arrays.copyOf(ranks, ranksUsed),
                    Arrays.copyOf(tokens, ranksUsed),
                    cpu,
                    disk));
            i = j;
        }
        return new TierBreakdown(Collections.unmodifiableList(instances), Collections.unmodifiableList(scores));
    }

    public List<InstanceBreakdown> instances() {
        return instances;
    }

    /** The instance's breakdown, or null when it has no entry. */
    public InstanceBreakdown instance(long workerId) {
        for (InstanceBreakdown b : instances) {
            if (b.workerId() == workerId) {
                return b;
            }
        }
        return null;
    }

    /** Owners with at least one device block, tokens = gpu blocks × block size, ordered like instances. */
    public List<Score> scores() {
        return scores;
    }
}
