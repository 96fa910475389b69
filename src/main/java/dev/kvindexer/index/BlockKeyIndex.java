package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import java.util.Arrays;

/**
 * One Mooncake Conductor context's index (docs/protocol/index.md#conductor-context-index): engines' own block keys (the
 * low 64 bits of vLLM's block
 * hash) mapped to who holds each block, GPU owners per registered (instance, rank) and CPU and disk copies shared by
 * every instance of the context, and the query that walks a prompt's keys GPU → CPU → disk per rank.
 *
 * <p>It differs from the prefix tree of {@link PartitionIndex} on purpose: keys already chain the whole prefix (vLLM
 * hashes a block with its parent's digest), so a presence map is exact without parents or tokens, and Mooncake Store
 * objects, which carry neither, meet engine blocks by key alone. Plain Java: changes on one thread; {@link #walk} may
 * run on several threads at once between changes.
 */
public final class BlockKeyIndex {
    /** Where an owner's cursor is in {@link #walk}. */
    private static final byte GPU = 0;

    private static final byte CPU = 1;
    private static final byte DISK = 2;
    private static final byte STOPPED = 3;
    /** GPU owners a key keeps in its slot; more (a prefix every rank holds) go to {@link #moreGpuOwners}. */
    private static final int INLINE_OWNERS = 4;

    private static final int NONE = -1;

    /**
     * Most keys {@link #walk} hashes and looks up together. Runs start at one block and double, so a prompt whose first
     * block nobody holds costs one hash, and one that stops at block k hashes at most LOOKUP_RUN - 1 blocks past it.
     */
    private static final int LOOKUP_RUN = 8;

    /**
     * A slot's record, side by side in a slab of ints: the key (high and low word), how many GPU owners, the first
     * {@link #INLINE_OWNERS} of them, CPU copies, disk copies. A walk reads one record a block, not a line of each of
     * five columns; slabs have a fixed size, so growing never copies.
     */
    private static final int AT_KEY_HIGH = 0;

    private static final int AT_KEY_LOW = 1;
    private static final int AT_GPU_COUNT = 2;
    private static final int AT_OWNERS = 3;
    private static final int AT_CPU = AT_OWNERS + INLINE_OWNERS;
    private static final int AT_DISK = AT_CPU + 1;
    private static final int STRIDE = AT_DISK + 1;
    private static final int SLAB_SHIFT = 12;
    private static final int SLAB_MASK = (1 << SLAB_SHIFT) - 1;

    /**
     * Each key held anywhere has a slot, and a slot's holders live in its record: a filled context is a few hundred
     * arrays of ints, not an object or two per block for the collector to trace and copy.
     */
    private int[][] slabs = new int[8][];

    private int slabCount;

    /** Key → slot, reading each key from its slot's record rather than keeping a second copy. */
    private final IdsByKey slots = new IdsByKey(this::keyAt);
    /** Owners past the first {@link #INLINE_OWNERS} of a slot, by slot. */
    private final Int2ObjectOpenHashMap<int[]> moreGpuOwners = new Int2ObjectOpenHashMap<>();

    private int[] freeSlots = new int[16];
    private int freeCount;
    private int nextSlot;
    /** The slots each owner holds on GPU, so clearing an owner does not scan every slot. */
    private final Int2ObjectOpenHashMap<OwnedSlots> gpuSlotsByOwner = new Int2ObjectOpenHashMap<>();
    /** The owner stored to last and its slots: an engine's batch stores many blocks in a row. */
    private int lastOwner = NONE;

    private OwnedSlots lastOwned;

    /**
     * The slots one owner has taken on GPU, in the order it took them. A store appends one; a removal leaves its entry,
     * which is then stale (its slot may even hold another key of the same owner later, so an entry may repeat), and
     * {@link #compact} drops the stale ones once they are as many as the live ones. A store costs an append, not a
     * hash set's probe and its rehashes as it grows.
     */
    private static final class OwnedSlots {
        int[] slots = new int[16];
        int size;
        /** Slots the owner holds now. */
        int held;

        void add(int s) {
            if (size == slots.length) {
                slots = Arrays.copyOf(slots, size * 2);
            }
            slots[size++] = s;
            held++;
        }
    }

    /** {@code owner} holds {@code key} on GPU; storing it again changes nothing. */
    public void storeGpu(int owner, long key) {
        int s = slotOf(key);
        if (heldOnGpuBy(s, owner)) {
            return;
        }
        int n = field(s, AT_GPU_COUNT);
        if (n < INLINE_OWNERS) {
            setField(s, AT_OWNERS + n, owner);
        } else {
            int[] more = moreGpuOwners.get(s);
            int at = n - INLINE_OWNERS;
            if (more == null || at == more.length) {
                more = more == null ? new int[INLINE_OWNERS] : Arrays.copyOf(more, more.length * 2);
                moreGpuOwners.put(s, more);
            }
            more[at] = owner;
        }
        setField(s, AT_GPU_COUNT, n + 1);
        ownedBy(owner).add(s);
    }

    private OwnedSlots ownedBy(int owner) {
        if (owner != lastOwner) {
            OwnedSlots owned = gpuSlotsByOwner.get(owner);
            if (owned == null) {
                owned = new OwnedSlots();
                gpuSlotsByOwner.put(owner, owned);
            }
            lastOwner = owner;
            lastOwned = owned;
        }
        return lastOwned;
    }

    /** {@code owner} no longer holds {@code key} on GPU; a key it did not hold changes nothing. */
    public void removeGpu(int owner, long key) {
        int s = slots.get(key);
        if (s == NONE || !heldOnGpuBy(s, owner)) {
            return;
        }
        dropGpu(owner, s);
        OwnedSlots owned = gpuSlotsByOwner.get(owner);
        if (--owned.held == 0) {
            forget(owner);
        } else if (owned.size - owned.held > owned.held + 16) {
            compact(owner, owned);
        }
    }

    /** Every GPU block of {@code owner} goes (AllBlocksCleared, or its registration ended). */
    public void clearGpu(int owner) {
        OwnedSlots owned = gpuSlotsByOwner.get(owner);
        if (owned == null) {
            return;
        }
        forget(owner);
        for (int i = 0; i < owned.size; i++) {
            int s = owned.slots[i];
            // a stale entry's slot is free (no owners) or another key's; a repeated one's owner is gone by now
            if (heldOnGpuBy(s, owner)) {
                dropGpu(owner, s);
            }
        }
    }

    private void forget(int owner) {
        gpuSlotsByOwner.remove(owner);
        if (owner == lastOwner) {
            lastOwner = NONE;
            lastOwned = null;
        }
    }

    /** Keeps the entries of slots {@code owner} still holds, each once (package-private: tests call it too). */
    void compact(int owner) {
        OwnedSlots owned = gpuSlotsByOwner.get(owner);
        if (owned != null) {
            compact(owner, owned);
        }
    }

    private void compact(int owner, OwnedSlots owned) {
        int n = 0;
        for (int i = 0; i < owned.size; i++) {
            int s = owned.slots[i];
            if (heldOnGpuBy(s, owner)) {
                owned.slots[n++] = s;
            }
        }
        if (n > owned.held) {
            Arrays.sort(owned.slots, 0, n);
            int unique = 0;
            for (int i = 0; i < n; i++) {
                if (i == 0 || owned.slots[i] != owned.slots[i - 1]) {
                    owned.slots[unique++] = owned.slots[i];
                }
            }
            n = unique;
        }
        owned.size = n;
        if (owned.slots.length > 4 * Math.max(n, 16)) {
            // an engine that held many blocks and holds few now does not keep the room for them
            owned.slots = Arrays.copyOf(owned.slots, 2 * Math.max(n, 16));
        }
    }

    /** How many entries {@code owner}'s slot list has, stale ones included (tests bound it). */
    int gpuEntries(int owner) {
        OwnedSlots owned = gpuSlotsByOwner.get(owner);
        return owned == null ? 0 : owned.size;
    }

    /** Takes {@code owner} out of slot {@code s}: the slot's last owner moves into its place. */
    private void dropGpu(int owner, int s) {
        int n = field(s, AT_GPU_COUNT);
        for (int i = 0; i < n; i++) {
            if (gpuOwner(s, i) == owner) {
                setGpuOwner(s, i, gpuOwner(s, n - 1));
                break;
            }
        }
        setField(s, AT_GPU_COUNT, n - 1);
        if (n - 1 == INLINE_OWNERS) {
            moreGpuOwners.remove(s); // the rest fit in the slot again
        }
        releaseIfEmpty(s);
    }

    private int gpuOwner(int s, int i) {
        return i < INLINE_OWNERS ? field(s, AT_OWNERS + i) : moreGpuOwners.get(s)[i - INLINE_OWNERS];
    }

    private void setGpuOwner(int s, int i, int owner) {
        if (i < INLINE_OWNERS) {
            setField(s, AT_OWNERS + i, owner);
        } else {
            moreGpuOwners.get(s)[i - INLINE_OWNERS] = owner;
        }
    }

    private boolean heldOnGpuBy(int s, int owner) {
        return heldOnGpuBy(s, owner, field(s, AT_GPU_COUNT) > INLINE_OWNERS ? moreGpuOwners.get(s) : null);
    }

    /** {@code more} is the slot's {@link #moreGpuOwners} entry, looked up once by a caller asking for many owners. */
    private boolean heldOnGpuBy(int s, int owner, int[] more) {
        int[] slab = slabs[s >>> SLAB_SHIFT];
        int base = (s & SLAB_MASK) * STRIDE;
        int n = slab[base + AT_GPU_COUNT];
        int inline = Math.min(n, INLINE_OWNERS);
        for (int i = 0; i < inline; i++) {
            if (slab[base + AT_OWNERS + i] == owner) {
                return true;
            }
        }
        for (int i = 0; i < n - INLINE_OWNERS; i++) {
            if (more[i] == owner) {
                return true;
            }
        }
        return false;
    }

    /**
     * One more Store object holds {@code key} in {@code tier}, {@link StorageTier#HOST_PINNED} (CPU) or
     * {@link StorageTier#DISK}; the caller keeps its binding.
     */
    public void addShared(StorageTier tier, long key) {
        int s = slotOf(key);
        if (tier == StorageTier.HOST_PINNED) {
            setField(s, AT_CPU, field(s, AT_CPU) + 1);
        } else {
            setField(s, AT_DISK, field(s, AT_DISK) + 1);
        }
    }

    /** One Store object that held {@code key} in {@code tier} is gone. */
    public void removeShared(StorageTier tier, long key) {
        int s = slots.get(key);
        if (s == NONE) {
            return;
        }
        int at = tier == StorageTier.HOST_PINNED ? AT_CPU : tier == StorageTier.DISK ? AT_DISK : -1;
        if (at >= 0 && field(s, at) > 0) {
            setField(s, at, field(s, at) - 1);
        }
        releaseIfEmpty(s);
    }

    /** Keys held anywhere ({@code prefix_count} of /global_view). */
    public int keyCount() {
        return slots.size();
    }

    /** The key's slot, made empty when the key had none. */
    private int slotOf(long key) {
        int s = slots.get(key);
        if (s != NONE) {
            return s;
        }
        if (freeCount > 0) {
            s = freeSlots[--freeCount];
        } else {
            s = nextSlot++;
            if (s >>> SLAB_SHIFT == slabCount) {
                if (slabCount == slabs.length) {
                    slabs = Arrays.copyOf(slabs, slabCount * 2);
                }
                slabs[slabCount++] = new int[(SLAB_MASK + 1) * STRIDE];
            }
        }
        int[] slab = slabs[s >>> SLAB_SHIFT];
        int base = (s & SLAB_MASK) * STRIDE;
        slab[base + AT_KEY_HIGH] = (int) (key >>> 32);
        slab[base + AT_KEY_LOW] = (int) key;
        slab[base + AT_GPU_COUNT] = 0;
        slab[base + AT_CPU] = 0;
        slab[base + AT_DISK] = 0;
        slots.putIfAbsent(key, s);
        return s;
    }

    private long keyAt(int s) {
        int[] slab = slabs[s >>> SLAB_SHIFT];
        int base = (s & SLAB_MASK) * STRIDE;
        return (long) slab[base + AT_KEY_HIGH] << 32 | (slab[base + AT_KEY_LOW] & 0xFFFFFFFFL);
    }

    private int field(int s, int at) {
        return slabs[s >>> SLAB_SHIFT][(s & SLAB_MASK) * STRIDE + at];
    }

    private void setField(int s, int at, int value) {
        slabs[s >>> SLAB_SHIFT][(s & SLAB_MASK) * STRIDE + at] = value;
    }

    private void releaseIfEmpty(int s) {
        if (field(s, AT_GPU_COUNT) != 0 || field(s, AT_CPU) != 0 || field(s, AT_DISK) != 0) {
            return;
        }
        slots.remove(keyAt(s), s);
        if (slots.size() == 0) {
            // Every slot is free: the next stores take them from the first again, in the order they come, instead of
            // in the order the last ones left (scattered over the slabs, a cache miss a block).
            freeCount = 0;
            nextSlot = 0;
            return;
        }
        if (freeCount == freeSlots.length) {
            freeSlots = Arrays.copyOf(freeSlots, freeCount * 2);
        }
        freeSlots[freeCount++] = s;
    }

    /** The keys of a prompt, computed on demand: a walk that stalls early leaves all but a few of the rest unhashed. */
    public interface PromptKeys {
        /** Complete blocks in the prompt. */
        int blocks();

        /** The key of block {@code i}, {@code 0 <= i < blocks()}, asked in increasing order from 0. */
        long key(int i);
    }

    /**
     * The walk of step 4 of the Conductor query (docs/protocol/index.md#conductor-context-index) for each owner (a
     * registered (instance, rank)): a cursor moves over the blocks held on GPU by that owner, then over blocks with any
     * CPU copy, then any disk copy, never back. Writes, per owner {@code o}, {@code out[3o]} = GPU blocks,
     * {@code out[3o+1]} = blocks through CPU, {@code out[3o+2]} = blocks through disk.
     *
     * <p>All owners' cursors advance together over one pass of the prompt, so each block's key is computed and looked
     * up once however many owners walk over it, and the pass ends at the first block every cursor has stopped before.
     */
    public void walk(PromptKeys prompt, int[] owners, int[] out) {
        int n = prompt.blocks();
        int count = owners.length;
        // A cursor still moving at the end of the prompt reached every block in each tier it had left.
        Arrays.fill(out, 0, 3 * count, n);
        byte[] phase = new byte[count];
        int walking = count;
        long[] keys = new long[LOOKUP_RUN];
        int[] found = new int[LOOKUP_RUN];
        int[] gpuHolders = new int[LOOKUP_RUN];
        int[] firstGpuHolder = new int[LOOKUP_RUN];
        boolean[] onCpu = new boolean[LOOKUP_RUN];
        boolean[] onDisk = new boolean[LOOKUP_RUN];
        int[][] more = new int[LOOKUP_RUN][];
        int run = 1;
        for (int from = 0; from < n && walking > 0; from += run, run = Math.min(2 * run, LOOKUP_RUN)) {
            int length = Math.min(n - from, run);
            for (int j = 0; j < length; j++) {
                keys[j] = prompt.key(from + j);
            }
            // The run's lookups, then its records, each pass for the whole run before the next: their cache misses
            // overlap instead of each waiting behind a SHA-256 or the read before it (a prompt's slots lie anywhere
            // once engines have re-registered).
            for (int j = 0; j < length; j++) {
                found[j] = slots.guess(keys[j]);
            }
            for (int j = 0; j < length; j++) {
                int h = found[j];
                if (h != NONE && keyAt(h) != keys[j]) {
                    h = found[j] = slots.peek(keys[j]); // another key's fingerprint: the full probe
                }
                if (h == NONE) {
                    gpuHolders[j] = 0;
                    firstGpuHolder[j] = NONE;
                    onCpu[j] = false;
                    onDisk[j] = false;
                } else {
                    int[] slab = slabs[h >>> SLAB_SHIFT];
                    int base = (h & SLAB_MASK) * STRIDE;
                    gpuHolders[j] = slab[base + AT_GPU_COUNT];
                    firstGpuHolder[j] = slab[base + AT_OWNERS];
                    onCpu[j] = slab[base + AT_CPU] != 0;
                    onDisk[j] = slab[base + AT_DISK] != 0;
                }
            }
            for (int j = 0; j < length; j++) {
                more[j] = gpuHolders[j] > INLINE_OWNERS ? moreGpuOwners.get(found[j]) : null;
            }
            for (int j = 0; j < length && walking > 0; j++) {
                int i = from + j;
                int h = found[j];
                for (int o = 0; o < count; o++) {
                    int p = phase[o];
                    if (p == GPU
                            && (gpuHolders[j] == 0
                                    || owners[o] != firstGpuHolder[j] && !heldOnGpuBy(h, owners[o], more[j]))) {
                        out[3 * o] = i;
                        p = CPU;
                    }
                    if (p == CPU && !onCpu[j]) {
                        out[3 * o + 1] = i;
                        p = DISK;
                    }
                    if (p == DISK && !onDisk[j]) {
                        out[3 * o + 2] = i;
                        p = STOPPED;
                        walking--;
                    }
                    phase[o] = (byte) p;
                }
            }
        }
    }
}
