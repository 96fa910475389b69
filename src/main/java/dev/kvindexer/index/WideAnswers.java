package dev.kvindexer.index;

import java.util.Arrays;

/**
 * One matcher's answers to the wide start of a prompt, kept to build the next answer from. When a fleet shares a
 * system prompt, every query's first blocks are held by every engine, and the answer lists them all though only the
 * few engines that hold the rest of the conversation differ between queries. An entry is the answer for the prompt cut
 * at its last wide block, with where each owner sits in it; it is valid while the walk to that block finds the same
 * nodes with the same owners left at each of them, and the owners' order has not changed.
 */
final class WideAnswers {
    /** Owners left at a level for it to count as wide; below it the walk's own bookkeeping is cheaper. */
    static final int WIDE_OWNERS = 256;

    private static final int ENTRIES = 8;
    /**
     * Wide answers a look at how often a kept one served: when under half did, more first blocks take turns than there
     * are entries, and keeping one costs a second walk that no later query repays, so none is kept for {@link #REST}.
     */
    private static final int WINDOW = 64;

    private static final int REST = 1024;

    /** An answer to the prompt cut after {@code path.length} blocks. */
    static final class Entry {
        int[] path = new int[0];
        /** The owners left at each level of the path, {@code words} words a level. */
        long[] left = new long[0];

        int words;
        int orderVersion = -1;
        int size;
        /** A new array each time the answer is taken, never written after: the answers built from it share it. */
        long[] workers = new long[0];
        /** The workers' instance starts ({@link OwnerMatches#starts}), taken and shared as they are. */
        int[] starts = new int[] {0};

        /** As {@link #workers}: never written after taken; an answer with no owner deeper shares it whole. */
        int[] fields = new int[0];
        /** By owner id: its entry in the answer; valid for the owners the answer lists. */
        int[] position = new int[0];

        /** Whether the walk's levels so far agree with this entry's, level {@code level} given. */
        boolean agrees(int level, int node, long[] act, int wordCount) {
            if (level >= path.length || path[level] != node || wordCount != words) {
                return false;
            }
            int from = level * words;
            for (int w = 0; w < words; w++) {
                if (left[from + w] != act[w]) {
                    return false;
                }
            }
            return true;
        }

        /** Records the walk's level {@code level}: its node and the owners left there. */
        void level(int level, int node, long[] act, int wordCount) {
            if (path.length <= level) {
                path = Arrays.copyOf(path, level + 1);
            }
            if (left.length < (level + 1) * wordCount) {
                left = Arrays.copyOf(left, (level + 1) * wordCount);
            }
            path[level] = node;
            words = wordCount;
            System.arraycopy(act, 0, left, level * wordCount, wordCount);
        }

        void cut(int levels) {
            if (path.length != levels) {
                path = Arrays.copyOf(path, levels);
            }
        }

        /** Takes the answer's columns and each owner's place in them. */
        void answer(int n, long[] w, int[] f, int[] positionById, int version) {
            size = n;
            workers = Arrays.copyOf(w, n);
            starts = OwnerMatches.starts(workers, n);
            fields = Arrays.copyOf(f, n * OwnerMatches.FIELDS);
            position = positionById;
            orderVersion = version;
        }
    }

    private final Entry[] entries = new Entry[ENTRIES];
    private int next;
    private int seen;
    private int served;
    private int resting;

    /** Counts a wide answer, and whether a kept one served it. */
    void answered(boolean fromKept) {
        served += fromKept ? 1 : 0;
        if (++seen == WINDOW) {
            if (served * 2 < seen) {
                resting = REST;
            }
            seen = 0;
            served = 0;
        }
    }

    /** Whether a wide answer that no entry serves should be kept now; false while resting. */
    boolean mayKeep() {
        if (resting > 0) {
            resting--;
            return false;
        }
        return true;
    }

    /** The entry whose walk starts at {@code firstNode}, or null. */
    Entry startingAt(int firstNode, int orderVersion) {
        for (Entry e : entries) {
            if (e != null && e.path.length > 0 && e.path[0] == firstNode && e.orderVersion == orderVersion) {
                return e;
            }
        }
        return null;
    }

    /** An entry to fill, the one after the last filled. */
    Entry replace(Entry current) {
        if (current != null) {
            return current;
        }
        Entry e = entries[next];
        if (e == null) {
            e = entries[next] = new Entry();
        }
        next = (next + 1) % ENTRIES;
        e.orderVersion = -1;
        return e;
    }
}
