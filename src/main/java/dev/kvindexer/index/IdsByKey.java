package dev.kvindexer.index;

/**
 * 64-bit key → int id, as an open-addressing table of ints: the key is read from the caller's {@link KeyColumn}
 * rather than stored again (the device tree's engine hashes, a Conductor context's block keys). Linear probing with
 * backward-shift deletion. Above the id, a slot keeps how far the entry sits from its home slot (so deleting reads no
 * column) and a fingerprint of the key (so a probe reads the column only when the fingerprint agrees). Which ids are
 * listed is kept as a bitset, so growing re-reads the column in id order rather than at random. The slots are split
 * into segments so that a large table is no single huge array for the collector to place.
 */
final class IdsByKey {
    /** Ids below this fit a slot with room for the distance bits. */
    static final int MAX_IDS = (1 << 29) - 1;

    private static final int MIN_CAPACITY = 1 << 10;
    private static final int SEGMENT_SHIFT = 16;
    private static final int SEGMENT_MASK = (1 << SEGMENT_SHIFT) - 1;
    private static final int DISTANCE_BITS = 3;
    /** A stored distance of this value means "this far or farther": the home is then read from the column. */
    private static final int FAR = (1 << DISTANCE_BITS) - 1;

    private final KeyColumn keys;
    private final IdBits listed = new IdBits();
    private int[][] slots = segments(MIN_CAPACITY);
    private int mask = MIN_CAPACITY - 1;
    /** 64 minus log2 of the capacity: the home slot is the top bits of the mixed key. */
    private int homeShift = 64 - Integer.numberOfTrailingZeros(MIN_CAPACITY);

    private int size;
    /** Slot = fingerprint, distance, then id + 1 in the low {@code idBits} (0 marks an empty slot). */
    private int idBits;

    private int idMask;
    private int fingerprintMask;
    /**
     * Where the last {@link #get} ended, so that the remove or insert a caller usually makes next under the same key
     * starts there instead of probing again: the slot of the id found, or the empty slot that ended a miss.
     */
    private int lastSlot;

    private long missedKey;
    /** Changes of the table; an insert trusts the last miss only if none happened since. */
    private int changes;

    private int missedAt = -1;

    IdsByKey(KeyColumn keys) {
        this.keys = keys;
        layout(16);
    }

    /**
     * {@link #get} for queries, which may run on several threads at once: it leaves no hint for the next change (the
     * hints are the changing thread's alone).
     */
    int peek(long key) {
        int slot = slotAt(probe(key));
        return slot == 0 ? -1 : (slot & idMask) - 1;
    }

    /**
     * The first id along {@code key}'s probe whose fingerprint agrees, or -1 when the probe ends first (then no id is
     * listed under the key). It reads no key column: a caller about to read the id's record anyway confirms the key
     * there, and asks {@link #peek} when it differs. Safe from several threads at once, as {@link #peek}.
     */
    int guess(long key) {
        long m = mix(key);
        int fp = (int) m & fingerprintMask;
        int[][] s = slots;
        for (int i = (int) (m >>> homeShift); ; i = (i + 1) & mask) {
            int slot = s[i >>> SEGMENT_SHIFT][i & SEGMENT_MASK];
            if (slot == 0) {
                return -1;
            }
            if ((slot & fingerprintMask) == fp) {
                return (slot & idMask) - 1;
            }
        }
    }

    /** The id listed under a key, or -1. */
    int get(long key) {
        int i = probe(key);
        int slot = slotAt(i);
        lastSlot = i;
        if (slot == 0) {
            missedKey = key;
            missedAt = changes;
            return -1;
        }
        return (slot & idMask) - 1;
    }

    /** Where a key's probe ends: the slot listing it, or the empty slot that ends a miss. */
    private int probe(long key) {
        long m = mix(key);
        int fp = (int) m & fingerprintMask;
        int[][] s = slots;
        for (int i = (int) (m >>> homeShift); ; i = (i + 1) & mask) {
            int slot = s[i >>> SEGMENT_SHIFT][i & SEGMENT_MASK];
            if (slot == 0 || ((slot & fingerprintMask) == fp && keys.key((slot & idMask) - 1) == key)) {
                return i;
            }
        }
    }

    private int slotAt(int i) {
        return slots[i >>> SEGMENT_SHIFT][i & SEGMENT_MASK];
    }

    /** Lists {@code id} under its key unless another id is listed there; returns that id, or -1. */
    int putIfAbsent(long key, int id) {
        if (id >= idMask) {
            widenIds(id + 1);
        }
        long m = mix(key);
        int fp = (int) m & fingerprintMask;
        int home = (int) (m >>> homeShift);
        int i = missedAt == changes && missedKey == key ? lastSlot : home;
        for (; ; i = (i + 1) & mask) {
            int slot = slot(i);
            if (slot == 0) {
                break;
            }
            if ((slot & fingerprintMask) == fp) {
                int other = (slot & idMask) - 1;
                if (keys.key(other) == key) {
                    return other;
                }
            }
        }
        setSlot(i, encode(fp, (i - home) & mask, id));
        changes++;
        listed.set(id);
        if (++size > (mask + 1) / 4 * 3) {
            rebuild((mask + 1) * 2, idBits);
        }
        return -1;
    }

    /** Unlists {@code id} if it is the id listed under its key. */
    void remove(long key, int id) {
        if (!listed.get(id)) {
            return;
        }
        int i = (slot(lastSlot) & idMask) == id + 1 ? lastSlot : (int) (mix(key) >>> homeShift);
        for (int slot = slot(i); (slot & idMask) != id + 1; slot = slot(i)) {
            if (slot == 0) {
                return;
            }
            i = (i + 1) & mask;
        }
        listed.clear(id);
        size--;
        changes++;
        // Backward shift: move later entries of the cluster into the gap when their home slot allows it.
        for (int j = (i + 1) & mask; ; j = (j + 1) & mask) {
            int slot = slot(j);
            if (slot == 0) {
                break;
            }
            int distance = distance(slot, j);
            int gap = (j - i) & mask;
            if (distance >= gap) {
                setSlot(i, (slot & ~(FAR << idBits)) | Math.min(distance - gap, FAR) << idBits);
                i = j;
            }
        }
        setSlot(i, 0);
    }

    /** Whether {@code id} is the id listed under its key. */
    boolean lists(int id) {
        return listed.get(id);
    }

    int size() {
        return size;
    }

    long bytes() {
        return 16 + 4L * slots.length + (16 + 4L * slots[0].length) * slots.length + 16 + listed.bytes();
    }

    /** How far the entry in slot {@code j} sits from its home slot. */
    private int distance(int slot, int j) {
        int d = (slot >>> idBits) & FAR;
        if (d < FAR) {
            return d;
        }
        return (j - (int) (mix(keys.key((slot & idMask) - 1)) >>> homeShift)) & mask;
    }

    private int encode(int fp, int distance, int id) {
        return fp | Math.min(distance, FAR) << idBits | (id + 1);
    }

    private void widenIds(int limit) {
        if (limit > MAX_IDS) {
            throw new IllegalStateException("a key table holds at most " + MAX_IDS + " ids");
        }
        int bits = idBits;
        while ((1 << bits) - 1 < limit) {
            bits++;
        }
        rebuild(mask + 1, Math.min(29, Math.max(bits, idBits + 4)));
    }

    private void layout(int bits) {
        idBits = bits;
        idMask = (1 << bits) - 1;
        int low = bits + DISTANCE_BITS;
        fingerprintMask = low >= 32 ? 0 : -(1 << low);
    }

    private void rebuild(int capacity, int newIdBits) {
        layout(newIdBits);
        lastSlot = 0;
        changes++;
        slots = segments(capacity);
        mask = capacity - 1;
        homeShift = 64 - Integer.numberOfTrailingZeros(capacity);
        for (int id = listed.next(0); id >= 0; id = listed.next(id + 1)) {
            long m = mix(keys.key(id));
            int home = (int) (m >>> homeShift);
            int i = home;
            while (slot(i) != 0) {
                i = (i + 1) & mask;
            }
            setSlot(i, encode((int) m & fingerprintMask, (i - home) & mask, id));
        }
    }

    private int slot(int i) {
        return slots[i >>> SEGMENT_SHIFT][i & SEGMENT_MASK];
    }

    private void setSlot(int i, int value) {
        slots[i >>> SEGMENT_SHIFT][i & SEGMENT_MASK] = value;
    }

    /** A power-of-two capacity as segments of at most 2^16 slots. */
    private static int[][] segments(int capacity) {
        int segment = Math.min(capacity, SEGMENT_MASK + 1);
        int[][] s = new int[capacity / segment][];
        for (int k = 0; k < s.length; k++) {
            s[k] = new int[segment];
        }
        return s;
    }

    /**
     * Fibonacci hashing: the top bits of the product pick the home slot, and its low word, which small or sequential
     * hashes from tests and tools spread less well, only the fingerprint.
     */
    private static long mix(long h) {
        return h * 0x9E3779B97F4A7C15L;
    }
}
