package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;

/**
 * One Mooncake Conductor context's index (docs/protocol/index.md#conductor-context-index): engines' own block keys (the
 * low 64 bits of vLLM's block
 * hash) mapped to who holds each block, GPU owners per registered (instance, rank) and CPU and disk copies shared by
 * every instance of the context, and the query that walks a prompt's keys GPU → CPU → disk per rank.
 *
 * <p>It differs from the prefix tree of {@link PartitionIndex} on purpose: keys already chain the whole prefix (vLLM
 * hashes a block with its parent's digest), so a presence map is exact without parents or tokens, and Mooncake Store
 * objects, which carry neither, meet engine blocks by key alone. Plain Java, single-threaded.
 */
public final class BlockKeyIndex {
    /** Who holds one key. GPU owners are the registrations' slots; CPU and disk copies are counted. */
    private static final class Holders {
        int[] gpu = new int[2];
        int gpuCount;
        int cpu;
        int disk;

        boolean empty() {
            return gpuCount == 0 && cpu == 0 && disk == 0;
        }

        boolean heldOnGpuBy(int owner) {
            for (int i = 0; i < gpuCount; i++) {
                if (gpu[i] == owner) {
                    return true;
                }
            }
            return false;
        }
    }

    /** Where an owner's cursor is in {@link #walk}. */
    private static final byte GPU = 0;

    private static final byte CPU = 1;
    private static final byte DISK = 2;
    private static final byte STOPPED = 3;

    private final Long2ObjectOpenHashMap<Holders> keys = new Long2ObjectOpenHashMap<>();
    /** Every key an owner holds on GPU, so clearing an owner does not scan the whole map. */
    private final Int2ObjectOpenHashMap<LongOpenHashSet> gpuKeysByOwner = new Int2ObjectOpenHashMap<>();

    /** {@code owner} holds {@code key} on GPU; storing it again changes nothing. */
    public void storeGpu(int owner, long key) {
        Holders h = keys.get(key);
        if (h == null) {
            h = new Holders();
            keys.put(key, h);
        } else if (h.heldOnGpuBy(owner)) {
            return;
        }
        if (h.gpuCount == h.gpu.length) {
            h.gpu = java.util.Arrays.copyOf(h.gpu, h.gpu.length * 2);
        }
        h.gpu[h.gpuCount++] = owner;
        gpuKeysByOwner.computeIfAbsent(owner, o -> new LongOpenHashSet()).add(key);
    }

    /** {@code owner} no longer holds {@code key} on GPU; a key it did not hold changes nothing. */
    public void removeGpu(int owner, long key) {
        LongOpenHashSet owned = gpuKeysByOwner.get(owner);
        if (owned == null || !owned.remove(key)) {
            return;
        }
        dropGpu(owner, key);
        if (owned.isEmpty()) {
            gpuKeysByOwner.remove(owner);
        }
    }

    /** Every GPU block of {@code owner} goes (AllBlocksCleared, or its registration ended). */
    public void clearGpu(int owner) {
        LongOpenHashSet owned = gpuKeysByOwner.remove(owner);
        if (owned == null) {
            return;
        }
        var it = owned.iterator();
        while (it.hasNext()) {
            dropGpu(owner, it.nextLong());
        }
    }

    private void dropGpu(int owner, long key) {
        Holders h = keys.get(key);
        for (int i = 0; i < h.gpuCount; i++) {
            if (h.gpu[i] == owner) {
                h.gpu[i] = h.gpu[--h.gpuCount];
                break;
            }
        }
        if (h.empty()) {
            keys.remove(key);
        }
    }

    /**
     * One more Store object holds {@code key} in {@code tier}, {@link StorageTier#HOST_PINNED} (CPU) or
     * {@link StorageTier#DISK}; the caller keeps its binding.
     */
    public void addShared(StorageTier tier, long key) {
        Holders h = keys.get(key);
        if (h == null) {
            h = new Holders();
            keys.put(key, h);
        }
        if (tier == StorageTier.HOST_PINNED) {
            h.cpu++;
        } else {
            h.disk++;
        }
    }

    /** One Store object that held {@code key} in {@code tier} is gone. */
    public void removeShared(StorageTier tier, long key) {
        Holders h = keys.get(key);
        if (h == null) {
            return;
        }
        if (tier == StorageTier.HOST_PINNED && h.cpu > 0) {
            h.cpu--;
        } else if (tier == StorageTier.DISK && h.disk > 0) {
            h.disk--;
        }
        if (h.empty()) {
            keys.remove(key);
        }
    }

    /** Store objects holding {@code key} in {@code tier} ({@link StorageTier#HOST_PINNED} or {@link StorageTier#DISK}). */
    int sharedCopies(StorageTier tier, long key) {
        Holders h = keys.get(key);
        return h == null ? 0 : tier == StorageTier.HOST_PINNED ? h.cpu : h.disk;
    }

    /** Keys held anywhere ({@code prefix_count} of /global_view). */
    public int keyCount() {
        return keys.size();
    }

    /** The keys of a prompt, computed on demand: a walk that stalls early leaves the rest unhashed. */
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
        byte[] phase = new byte[count];
        int walking = count;
        int i = 0;
        for (; i < n && walking > 0; i++) {
            Holders h = keys.get(prompt.key(i));
            for (int o = 0; o < count; o++) {
                int p = phase[o];
                if (p == GPU) {
                    if (h != null && h.heldOnGpuBy(owners[o])) {
                        continue;
                    }
                    out[3 * o] = i;
                    p = CPU;
                }
                if (p == CPU) {
                    if (h != null && h.cpu > 0) {
                        phase[o] = CPU;
                        continue;
                    }
                    out[3 * o + 1] = i;
                    p = DISK;
                }
                if (p == DISK) {
                    if (h != null && h.disk > 0) {
                        phase[o] = DISK;
                        continue;
                    }
                    out[3 * o + 2] = i;
                    p = STOPPED;
                    walking--;
                }
                phase[o] = (byte) p;
            }
        }
        // Cursors still moving reached the end of the prompt.
        for (int o = 0; o < count; o++) {
            switch (phase[o]) {
                case GPU -> {
                    out[3 * o] = i;
                    out[3 * o + 1] = i;
                    out[3 * o + 2] = i;
                }
                case CPU -> {
                    out[3 * o + 1] = i;
                    out[3 * o + 2] = i;
                }
                case DISK -> out[3 * o + 2] = i;
                default -> {}
            }
        }
    }
}
