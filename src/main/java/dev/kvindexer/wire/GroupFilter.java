package dev.kvindexer.wire;

import dev.kvindexer.event.KvEvent;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.util.Arrays;
import java.util.List;

/**
 * Hybrid-model group filter (docs/protocol/events.md#hybrid-model-group-filter): rule 1 (kind given: keep only main
 * attention kinds), rule 2
 * (else a group_idx other than 0 is ignored), and, for removals that carry no kind, the kind learned
 * per (dp_rank, group_idx) from earlier stores. The batch's rank arrives after its events, so
 * learning and the removals that depend on it are queued and replayed in order by {@link #resolve}.
 */
final class GroupFilter {
    /** Beyond this many (rank, group) pairs nothing more is learned: bounds memory against odd publishers. */
    private static final int MAX_LEARNED = 4096;

    private static final int UNKNOWN = -1;
    private static final int LEARN_MAIN = -1;
    private static final int LEARN_OTHER = -2;

    private final Long2IntOpenHashMap learned = new Long2IntOpenHashMap();
    /** Queued ops of the current batch: group, and an event index to decide or a LEARN_* marker. */
    private long[] opGroup = new long[8];

    private int[] opArg = new int[8];
    private int ops;

    GroupFilter() {
        learned.defaultReturnValue(UNKNOWN);
    }

    static boolean isMainKind(String kind) {
        return "full_attention".equals(kind) || "mla_attention".equals(kind) || "sink_full_attention".equals(kind);
    }

    /** Rules 1 and 2, which need no learned state. */
    static boolean keep(boolean hasGroup, long group, String kind) {
        if (kind != null) {
            return isMainKind(kind);
        }
        return !hasGroup || group == 0;
    }

    void beginBatch() {
        ops = 0;
    }

    /** A store that names both its group and its kind teaches that group's kind (kept or not). */
    void learn(long group, String kind) {
        push(group, isMainKind(kind) ? LEARN_MAIN : LEARN_OTHER);
    }

    /** A kind-less removal at {@code eventIndex} of the batch's output, decided once the rank is known. */
    void deferRemoval(int eventIndex, long group) {
        push(group, eventIndex);
    }

    /**
     * Replays the batch's ops for {@code rank}; removals that are filtered are set to null in
     * {@code events}. Returns how many were filtered.
     */
    int resolve(int rank, List<KvEvent> events) {
        int filtered = 0;
        for (int i = 0; i < ops; i++) {
            long key = ((long) rank << 32) | opGroup[i];
            int arg = opArg[i];
            if (arg < 0) {
                if (learned.size() < MAX_LEARNED || learned.containsKey(key)) {
                    learned.put(key, arg == LEARN_MAIN ? 1 : 0);
                }
                continue;
            }
            int kind = learned.get(key);
            boolean keep = kind == UNKNOWN ? opGroup[i] == 0 : kind == 1;
            if (!keep) {
                events.set(arg, null);
                filtered++;
            }
        }
        ops = 0;
        return filtered;
    }

    private void push(long group, int arg) {
        if (ops == opGroup.length) {
            opGroup = Arrays.copyOf(opGroup, ops * 2);
            opArg = Arrays.copyOf(opArg, ops * 2);
        }
        opGroup[ops] = group;
        opArg[ops] = arg;
        ops++;
    }
}
