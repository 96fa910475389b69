package dev.kvindexer.load;

import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.util.Arrays;

/**
 * Which ranks (by their dense index in a scope) hold each active sequence hash: the one index when a single rank
 * does, which is most hashes, and a bitset over the ranks when more do, which is a shared prefix. A selection then
 * finds how deep a prompt is active on every rank at once, a word of 64 ranks at a time, instead of looking the
 * prompt up in every rank's own set. The caller adds a rank when a hash becomes active there and removes it when it
 * stops being.
 */
final class HashHolders {
    private static final int NONE = Integer.MIN_VALUE;

    /** Hash → the holding rank's index (≥ 0), or {@code -(set + 1)} for the bitset {@code sets[set]}. */
    private final Long2IntOpenHashMap held = new Long2IntOpenHashMap();

    private long[][] sets = new long[8][];
    private int[] counts = new int[8];
    private final IntArrayList freeSets = new IntArrayList();
    private int usedSets;

    HashHolders() {
        held.defaultReturnValue(NONE);
    }

    void add(long hash, int rank) {
        int v = held.get(hash);
        if (v == NONE) {
            held.put(hash, rank);
        } else if (v >= 0) {
            if (v != rank) {
                int set = newSet();
                set(set, v);
                set(set, rank);
                held.put(hash, -(set + 1));
            }
        } else {
            set(-v - 1, rank);
        }
    }

    /** Takes {@code rank} off {@code hash}'s holders; nothing when it is not one. */
    void remove(long hash, int rank) {
        int v = held.get(hash);
        if (v == rank) {
            held.remove(hash);
        } else if (v < 0 && v != NONE) {
            int set = -v - 1;
            long[] bits = sets[set];
            int word = rank >>> 6;
            if (word >= bits.length || (bits[word] & (1L << rank)) == 0) {
                return;
            }
            bits[word] &= ~(1L << rank);
            if (--counts[set] == 1) {
                held.put(hash, onlyRank(bits));
                freeSet(set);
            }
        }
    }

    /** Adds one to {@code perRank[rank]} for every rank holding {@code hash}. */
    void countHolders(long hash, int[] perRank) {
        int v = held.get(hash);
        if (v >= 0) {
            perRank[v]++;
        } else if (v != NONE) {
            long[] bits = sets[-v - 1];
            for (int w = 0; w < bits.length; w++) {
                for (long r = bits[w]; r != 0; r &= r - 1) {
                    perRank[(w << 6) + Long.numberOfTrailingZeros(r)]++;
                }
            }
        }
    }

    /**
     * Writes into {@code depth} (indexed by rank, zeros where nothing is written) how many leading hashes of {@code
     * sequence} each rank holds. {@code ranks} bounds the rank indexes in use.
     */
    void depths(long[] sequence, int ranks, int[] depth) {
        if (sequence.length == 0) {
            return;
        }
        int v = held.get(sequence[0]);
        if (v == NONE) {
            return;
        }
        if (v >= 0) {
            depth[v] = depthOf(sequence, 1, v);
            return;
        }
        long[] alive = Arrays.copyOf(sets[-v - 1], (ranks + 63) >>> 6);
        for (int k = 1; k < sequence.length; k++) {
            v = held.get(sequence[k]);
            if (v == NONE) {
                stopAll(alive, depth, k);
                return;
            }
            if (v >= 0) {
                boolean goesOn = v < ranks && (alive[v >>> 6] & (1L << v)) != 0;
                if (goesOn) {
                    alive[v >>> 6] &= ~(1L << v);
                }
                stopAll(alive, depth, k);
                if (goesOn) {
                    depth[v] = depthOf(sequence, k + 1, v);
                }
                return;
            }
            long[] bits = sets[-v - 1];
            boolean any = false;
            for (int w = 0; w < alive.length; w++) {
                long keep = w < bits.length ? bits[w] : 0;
                long stopped = alive[w] & ~keep;
                if (stopped != 0) {
                    stop(stopped, w, depth, k);
                }
                any |= (alive[w] &= keep) != 0;
            }
            if (!any) {
                return;
            }
        }
        stopAll(alive, depth, sequence.length);
    }

    /** From block {@code from} on, how far the leading hashes go on {@code rank} alone. */
    private int depthOf(long[] sequence, int from, int rank) {
        int k = from;
        while (k < sequence.length && holds(sequence[k], rank)) {
            k++;
        }
        return k;
    }

    private boolean holds(long hash, int rank) {
        int v = held.get(hash);
        if (v >= 0) {
            return v == rank;
        }
        if (v == NONE) {
            return false;
        }
        long[] bits = sets[-v - 1];
        int word = rank >>> 6;
        return word < bits.length && (bits[word] & (1L << rank)) != 0;
    }

    private static void stopAll(long[] alive, int[] depth, int k) {
        for (int w = 0; w < alive.length; w++) {
            if (alive[w] != 0) {
                stop(alive[w], w, depth, k);
            }
        }
    }

    private static void stop(long ranks, int word, int[] depth, int k) {
        for (long r = ranks; r != 0; r &= r - 1) {
            depth[(word << 6) + Long.numberOfTrailingZeros(r)] = k;
        }
    }

    private void set(int set, int rank) {
        int word = rank >>> 6;
        long[] bits = sets[set];
        if (word >= bits.length) {
            bits = sets[set] = Arrays.copyOf(bits, Math.max(word + 1, bits.length * 2));
        }
        if ((bits[word] & (1L << rank)) == 0) {
            bits[word] |= 1L << rank;
            counts[set]++;
        }
    }

    private static int onlyRank(long[] bits) {
        for (int w = 0; ; w++) {
            if (bits[w] != 0) {
                return (w << 6) + Long.numberOfTrailingZeros(bits[w]);
            }
        }
    }

    private int newSet() {
        int set;
        if (!freeSets.isEmpty()) {
            set = freeSets.popInt();
        } else {
            if (usedSets == sets.length) {
                sets = Arrays.copyOf(sets, usedSets * 2);
                counts = Arrays.copyOf(counts, usedSets * 2);
            }
            set = usedSets++;
        }
        sets[set] = new long[1];
        counts[set] = 0;
        return set;
    }

    private void freeSet(int set) {
        sets[set] = null;
        freeSets.push(set);
    }
}
