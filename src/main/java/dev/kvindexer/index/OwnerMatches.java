package dev.kvindexer.index;

import dev.kvindexer.event.WorkerRank;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The owners a query matched, as columns. A prompt every owner holds a prefix of answers one entry per owner, and an
 * object per entry was most of a cached 128-block match's time (BENCHMARKS.md); two arrays cost one allocation each.
 * Callers that want {@link OwnerMatch} records take {@link #toList()} off the partition's event loop.
 */
public final class OwnerMatches {
    static final OwnerMatches NONE = new OwnerMatches(0, new long[0], new int[0], true);
    static final int FIELDS = 4; // dp rank, gpu, cpu, disk
    /** The reaches' places among an entry's fields, for {@link #field}. */
    static final int GPU = 1;

    static final int CPU = 2;
    static final int DISK = 3;

    private final int size;
    private final long[] workerIds;
    private final int[] fields;
    /** Known to be in (worker unsigned, rank) order, one entry an owner: a partition's match is built so. */
    private final boolean ordered;
    /** Each worker's first entry then {@link #size}, shared with the kept answer it came from; null when not kept. */
    private final int[] keptStarts;

    private OwnerMatches(int size, long[] workerIds, int[] fields, boolean ordered) {
        this(size, workerIds, fields, ordered, null);
    }

    private OwnerMatches(int size, long[] workerIds, int[] fields, boolean ordered, int[] keptStarts) {
        this.size = size;
        this.workerIds = workerIds;
        this.fields = fields;
        this.ordered = ordered;
        this.keptStarts = keptStarts;
    }

    /** Room for {@code capacity} entries, filled by {@link Builder#add}. */
    public static Builder builder(int capacity) {
        return new Builder(capacity);
    }

    /**
     * The first {@code size} entries of filled columns in (worker unsigned, rank) order, one an owner, copied: the
     * caller reuses its arrays.
     */
    static OwnerMatches orderedCopyOf(int size, long[] workerIds, int[] fields) {
        return size == 0
                ? NONE
                : new OwnerMatches(size, Arrays.copyOf(workerIds, size), Arrays.copyOf(fields, size * FIELDS), true);
    }

    /**
     * As {@link #orderedCopyOf}, the columns taken as they are with their instances' {@code starts} ({@link #starts}):
     * nobody may write them afterwards. A kept wide answer's, the same in every answer built from it (thousands of
     * entries with a large fleet).
     */
    static OwnerMatches sharing(int size, long[] workerIds, int[] starts, int[] fields) {
        return size == 0 ? NONE : new OwnerMatches(size, workerIds, fields, true, starts);
    }

    /** The first entry of each worker among the first {@code size} of {@code workerIds}, in order, then {@code size}. */
    static int[] starts(long[] workerIds, int size) {
        int[] start = new int[size + 1];
        int count = 0;
        for (int j = 0; j < size; j++) {
            if (j == 0 || workerIds[j] != workerIds[j - 1]) {
                start[count++] = j;
            }
        }
        start[count] = size;
        // One rank a worker, the usual case: no copy.
        return count == size ? start : Arrays.copyOf(start, count + 1);
    }

    public static OwnerMatches of(List<OwnerMatch> matches) {
        Builder b = builder(matches.size());
        for (OwnerMatch m : matches) {
            b.add(m.workerId(), m.dpRank(), m.gpuBlocks(), m.cpuBlocks(), m.diskBlocks());
        }
        return b.build();
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public long workerId(int i) {
        return workerIds[checked(i)];
    }

    public int dpRank(int i) {
        return fields[checked(i) * FIELDS];
    }

    public int gpuBlocks(int i) {
        return field(i, GPU);
    }

    public int cpuBlocks(int i) {
        return field(i, CPU);
    }

    public int diskBlocks(int i) {
        return field(i, DISK);
    }

    /** Entry {@code i}'s {@link #GPU}, {@link #CPU} or {@link #DISK} blocks. */
    int field(int i, int tier) {
        return fields[checked(i) * FIELDS + tier];
    }

    /**
     * Where each worker's entries begin, then {@link #size} ({@link #starts}), when the entries are known to be in order
     * ({@link #orderedCopyOf}): a kept wide answer's, shared and never to be written, or found now. Null otherwise, and
     * the caller checks the order itself.
     */
    int[] instanceStarts() {
        if (keptStarts != null) {
            return keptStarts;
        }
        return ordered ? starts(workerIds, size) : null;
    }

    private int checked(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException(i);
        }
        return i;
    }

    public OwnerMatch get(int i) {
        int f = checked(i) * FIELDS;
        return new OwnerMatch(workerIds[i], fields[f], fields[f + 1], fields[f + 2], fields[f + 3]);
    }

    public List<OwnerMatch> toList() {
        List<OwnerMatch> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            out.add(get(i));
        }
        return out;
    }

    /** Fills the columns of one answer; one thread fills it, then hands it over built. */
    public static final class Builder {
        private final long[] workerIds;
        private final int[] fields;
        private int size;

        private Builder(int capacity) {
            workerIds = new long[capacity];
            fields = new int[capacity * FIELDS];
        }

        public Builder add(long workerId, int dpRank, int gpu, int cpu, int disk) {
            int f = size * FIELDS;
            workerIds[size] = workerId;
            fields[f] = dpRank;
            fields[f + 1] = gpu;
            fields[f + 2] = cpu;
            fields[f + 3] = disk;
            size++;
            return this;
        }

        /** Adds every entry of {@code m}. */
        public Builder addAll(OwnerMatches m) {
            System.arraycopy(m.workerIds, 0, workerIds, size, m.size);
            System.arraycopy(m.fields, 0, fields, size * FIELDS, m.size * FIELDS);
            size += m.size;
            return this;
        }

        public OwnerMatches build() {
            return size == 0 ? NONE : new OwnerMatches(size, workerIds, fields, false);
        }
    }

    /** One entry per owner; an owner answered by both indexes keeps the larger reach in each tier. */
    static OwnerMatches merge(OwnerMatches a, OwnerMatches b) {
        if (b.isEmpty()) {
            return a;
        }
        if (a.isEmpty()) {
            return b;
        }
        Map<WorkerRank, OwnerMatch> byOwner = new LinkedHashMap<>();
        for (OwnerMatch m : a.toList()) {
            byOwner.put(new WorkerRank(m.workerId(), m.dpRank()), m);
        }
        for (OwnerMatch m : b.toList()) {
            byOwner.merge(
                    new WorkerRank(m.workerId(), m.dpRank()),
                    m,
                    (x, y) -> new OwnerMatch(
                            x.workerId(),
                            x.dpRank(),
                            Math.max(x.gpuBlocks(), y.gpuBlocks()),
                            Math.max(x.cpuBlocks(), y.cpuBlocks()),
                            Math.max(x.diskBlocks(), y.diskBlocks())));
        }
        return of(new ArrayList<>(byOwner.values()));
    }
}
