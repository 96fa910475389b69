package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The Conductor context index answers the reference's cases (docs/protocol/index.md#conductor-context-index). */
class BlockKeyIndexTest {
    private static final long K0 = 3236607068019569386L;
    private static final long K1 = 2758186210834249151L;
    private static final long K2 = 5191110061519319221L;
    private static final long K3 = 77L;

    private final BlockKeyIndex index = new BlockKeyIndex();

    private static BlockKeyIndex.PromptKeys prompt(long... keys) {
        return new BlockKeyIndex.PromptKeys() {
            @Override
            public int blocks() {
                return keys.length;
            }

            @Override
            public long key(int i) {
                return keys[i];
            }
        };
    }

    private int[] walk(BlockKeyIndex.PromptKeys prompt, int... owners) {
        return walk(index, prompt, owners);
    }

    private static int[] walk(BlockKeyIndex on, BlockKeyIndex.PromptKeys prompt, int... owners) {
        int[] out = new int[3 * owners.length];
        on.walk(prompt, owners, out);
        return out;
    }

    @Test
    void theSharedCacheVectorOfTheReference() {
        // Instance "1" rank 0 is owner 1, instance "2" rank 1 is owner 2; the Store holds all three blocks twice.
        index.storeGpu(1, K0);
        index.storeGpu(1, K1);
        for (long k : new long[] {K0, K1, K2}) {
            index.addShared(StorageTier.HOST_PINNED, k);
            index.addShared(StorageTier.DISK, k);
        }
        assertArrayEquals(new int[] {2, 3, 3, 0, 3, 3}, walk(prompt(K0, K1, K2), 1, 2));
        assertEquals(3, index.keyCount());
    }

    /** Emptied entirely (its slots then start over from the first), the index answers as one never filled. */
    @Test
    void anIndexEmptiedAndFilledAgainAnswersAsAFreshOne() {
        BlockKeyIndex fresh = new BlockKeyIndex();
        for (BlockKeyIndex i : new BlockKeyIndex[] {index, fresh}) {
            for (int owner = 1; owner <= 3; owner++) {
                i.storeGpu(owner, K0);
                i.storeGpu(owner, K1);
            }
            i.addShared(StorageTier.HOST_PINNED, K2);
        }
        for (int owner = 1; owner <= 3; owner++) {
            index.clearGpu(owner);
        }
        index.removeShared(StorageTier.HOST_PINNED, K2);
        assertEquals(0, index.keyCount());
        index.storeGpu(2, K3);
        index.storeGpu(1, K0);
        index.removeGpu(2, K3);
        for (int owner = 1; owner <= 3; owner++) {
            index.storeGpu(owner, K0);
            index.storeGpu(owner, K1);
        }
        index.addShared(StorageTier.HOST_PINNED, K2);
        assertEquals(fresh.keyCount(), index.keyCount());
        for (long[] keys : new long[][] {{K0, K1, K2}, {K0, K2}, {K1}, {K3}}) {
            assertArrayEquals(walk(fresh, prompt(keys), 1, 2, 3), walk(prompt(keys), 1, 2, 3));
        }
    }

    @Test
    void theCursorNeverGoesBackToAHigherTier() {
        index.storeGpu(1, K0);
        index.storeGpu(1, K1);
        index.addShared(StorageTier.HOST_PINNED, K2);
        index.addShared(StorageTier.DISK, K3);
        index.storeGpu(1, K3);
        assertArrayEquals(new int[] {2, 3, 4}, walk(prompt(K0, K1, K2, K3), 1));
        BlockKeyIndex diskOnly = new BlockKeyIndex();
        diskOnly.addShared(StorageTier.DISK, K0);
        assertArrayEquals(
                new int[] {0, 0, 1}, walk(diskOnly, prompt(K0), 1), "a disk-only first block: gpu 0, cpu 0, disk 1");
    }

    @Test
    void gpuBlocksOfOneOwnerNeverExtendAnother() {
        index.storeGpu(2, K0);
        index.storeGpu(1, K1);
        assertArrayEquals(new int[] {0, 0, 0, 1, 1, 1}, walk(prompt(K0, K1), 1, 2));
    }

    @Test
    void keysAreHashedOnlyAFewPastTheFurthestWalk() {
        AtomicInteger hashed = new AtomicInteger();
        index.storeGpu(1, K0);
        assertArrayEquals(new int[] {0, 0, 0}, walk(counted(hashed, 1000, 1000), 3));
        assertEquals(1, hashed.get(), "a prompt whose first block no walker holds costs that block");

        hashed.set(0);
        assertArrayEquals(new int[] {1, 1, 1, 0, 0, 0}, walk(counted(hashed, 1000, 1), 1, 2));
        assertEquals(3, hashed.get(), "block 0, then the run of blocks 1 and 2; each once");

        index.storeGpu(2, K0);
        for (long k = 1; k < 100; k++) {
            index.storeGpu(2, k);
        }
        hashed.set(0);
        assertArrayEquals(new int[] {100, 100, 100}, walk(counted(hashed, 1000, 100), 2));
        assertTrue(hashed.get() >= 101 && hashed.get() < 108, hashed.get() + " hashed for a walk to block 100");
    }

    /** Keys K0, 1, 2 ... up to {@code held}, then keys nobody holds; each key asked counted. */
    private static BlockKeyIndex.PromptKeys counted(AtomicInteger hashed, int blocks, int held) {
        return new BlockKeyIndex.PromptKeys() {
            @Override
            public int blocks() {
                return blocks;
            }

            @Override
            public long key(int i) {
                hashed.incrementAndGet();
                return i == 0 ? K0 : i < held ? i : 100_000 + i;
            }
        };
    }

    @Test
    void oneWalkForAllOwnersAnswersAsAPlainModelOfEveryChangeWould() {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(3);
        for (int round = 0; round < 200; round++) {
            BlockKeyIndex random = new BlockKeyIndex();
            int[] owners = new int[1 + rnd.nextInt(8)];
            java.util.Map<Integer, java.util.Set<Long>> gpu = new java.util.HashMap<>();
            for (int o = 0; o < owners.length; o++) {
                owners[o] = o * 3;
                gpu.put(owners[o], new java.util.HashSet<>());
            }
            java.util.Map<Long, Integer> cpu = new java.util.HashMap<>();
            java.util.Map<Long, Integer> disk = new java.util.HashMap<>();
            for (int e = 0; e < 600; e++) {
                long key = 1000 + rnd.nextInt(30);
                int owner = owners[rnd.nextInt(owners.length)];
                switch (rnd.nextInt(8)) {
                    case 0, 1, 2 -> {
                        random.storeGpu(owner, key);
                        gpu.get(owner).add(key);
                    }
                    case 3 -> {
                        random.removeGpu(owner, key);
                        gpu.get(owner).remove(key);
                    }
                    case 4 -> {
                        if (rnd.nextInt(4) == 0) {
                            random.clearGpu(owner);
                            gpu.get(owner).clear();
                        } else {
                            random.compact(owner); // changes nothing a walk or a clear sees
                        }
                    }
                    case 5 -> {
                        random.addShared(StorageTier.HOST_PINNED, key);
                        cpu.merge(key, 1, Integer::sum);
                    }
                    case 6 -> {
                        random.addShared(StorageTier.DISK, key);
                        disk.merge(key, 1, Integer::sum);
                    }
                    default -> {
                        StorageTier tier = rnd.nextBoolean() ? StorageTier.HOST_PINNED : StorageTier.DISK;
                        random.removeShared(tier, key);
                        (tier == StorageTier.DISK ? disk : cpu).computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
                    }
                }
            }
            long[] keys = new long[1 + rnd.nextInt(24)];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = 1000 + rnd.nextInt(30);
            }
            int[] together = new int[3 * owners.length];
            random.walk(prompt(keys), owners, together);
            java.util.Set<Long> anywhere = new java.util.HashSet<>(cpu.keySet());
            anywhere.addAll(disk.keySet());
            gpu.values().forEach(anywhere::addAll);
            assertEquals(anywhere.size(), random.keyCount(), "round " + round + ": keys held anywhere");
            for (int o = 0; o < owners.length; o++) {
                java.util.Set<Long> mine = gpu.get(owners[o]);
                int c = 0;
                while (c < keys.length && mine.contains(keys[c])) {
                    c++;
                }
                int g = c;
                while (c < keys.length && cpu.containsKey(keys[c])) {
                    c++;
                }
                int h = c;
                while (c < keys.length && disk.containsKey(keys[c])) {
                    c++;
                }
                assertArrayEquals(
                        new int[] {g, h, c},
                        java.util.Arrays.copyOfRange(together, 3 * o, 3 * o + 3),
                        "round " + round + ", owner " + o);
                assertTrue(
                        random.gpuEntries(owners[o]) <= 2 * mine.size() + 17,
                        "round " + round + ", owner " + o + ": " + random.gpuEntries(owners[o]) + " entries");
            }
            for (int owner : owners) {
                random.clearGpu(owner);
            }
            java.util.Set<Long> shared = new java.util.HashSet<>(cpu.keySet());
            shared.addAll(disk.keySet());
            assertEquals(shared.size(), random.keyCount(), "round " + round + ": only shared copies after the clears");
        }
    }

    /**
     * Tens of thousands of keys over the whole 64-bit range, more owners on a key than a slot keeps inline, slots
     * freed and taken again: every owner's reach equals a plain model's through the stores, the removals and a clear.
     */
    @Test
    void manyKeysAndOwnersAnswerAsAPlainModelThroughGrowthAndReuse() {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(9);
        long[] keys = new long[20_000];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = rnd.nextLong();
        }
        int[] owners = {0, 1, 2, 3, 4, 5, 6};
        java.util.List<java.util.Set<Long>> gpu = new java.util.ArrayList<>();
        BlockKeyIndex big = new BlockKeyIndex();
        for (int o : owners) {
            gpu.add(new java.util.HashSet<>());
            int held = keys.length - 2_000 * o;
            for (int i = 0; i < held; i++) {
                big.storeGpu(o, keys[i]);
                gpu.get(o).add(keys[i]);
            }
        }
        java.util.Set<Long> cpu = new java.util.HashSet<>();
        for (int i = 0; i < keys.length - 1_000; i++) {
            big.addShared(StorageTier.HOST_PINNED, keys[i]);
            cpu.add(keys[i]);
        }
        assertReachesAsModel(big, keys, owners, gpu, cpu);
        for (int step = 0; step < 30_000; step++) {
            int o = owners[rnd.nextInt(owners.length)];
            long key = keys[rnd.nextInt(keys.length)];
            if (rnd.nextInt(3) == 0) {
                big.storeGpu(o, key);
                gpu.get(o).add(key);
            } else {
                big.removeGpu(o, key);
                gpu.get(o).remove(key);
            }
        }
        assertReachesAsModel(big, keys, owners, gpu, cpu);
        big.clearGpu(3);
        gpu.get(3).clear();
        for (int i = keys.length - 1; i >= 0; i -= 2) {
            big.storeGpu(5, keys[i]);
            gpu.get(5).add(keys[i]);
        }
        assertReachesAsModel(big, keys, owners, gpu, cpu);
    }

    /**
     * A lookup takes the first slot whose fingerprint agrees and confirms the key in that slot's record: with a few
     * hundred thousand keys the fingerprints are short, and keys nobody holds meet held ones' fingerprints often.
     */
    @Test
    void aKeyNobodyHoldsIsNotTakenForAHeldOneWithTheSameFingerprint() {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(13);
        BlockKeyIndex big = new BlockKeyIndex();
        java.util.Set<Long> held = new java.util.HashSet<>();
        for (int i = 0; i < 200_000; i++) {
            long key = rnd.nextLong();
            big.storeGpu(1, key);
            held.add(key);
        }
        for (int q = 0; q < 3_000; q++) {
            long key = rnd.nextLong();
            int expected = held.contains(key) ? 1 : 0;
            assertArrayEquals(new int[] {expected, expected, expected}, walk(big, prompt(key), 1), "key " + key);
        }
    }

    private static void assertReachesAsModel(
            BlockKeyIndex on,
            long[] keys,
            int[] owners,
            java.util.List<java.util.Set<Long>> gpu,
            java.util.Set<Long> cpu) {
        java.util.Set<Long> anywhere = new java.util.HashSet<>(cpu);
        gpu.forEach(anywhere::addAll);
        assertEquals(anywhere.size(), on.keyCount(), "keys held anywhere");
        int[] out = walk(on, prompt(keys), owners);
        for (int o = 0; o < owners.length; o++) {
            int c = 0;
            while (c < keys.length && gpu.get(o).contains(keys[c])) {
                c++;
            }
            int g = c;
            while (c < keys.length && cpu.contains(keys[c])) {
                c++;
            }
            assertArrayEquals(new int[] {g, c, c}, java.util.Arrays.copyOfRange(out, 3 * o, 3 * o + 3), "owner " + o);
        }
    }

    @Test
    void removalsAndClearsLeaveNoEmptyKeys() {
        index.storeGpu(1, K0);
        index.storeGpu(1, K0);
        index.storeGpu(2, K0);
        index.storeGpu(1, K1);
        index.addShared(StorageTier.HOST_PINNED, K2);
        index.addShared(StorageTier.HOST_PINNED, K2);
        index.removeGpu(1, K0);
        assertArrayEquals(new int[] {0, 0, 0, 1, 1, 1}, walk(prompt(K0), 1, 2), "stored twice, removed once: gone");
        index.clearGpu(1);
        index.removeGpu(2, K0);
        index.removeShared(StorageTier.HOST_PINNED, K2);
        assertEquals(1, index.keyCount(), "one CPU copy of K2 is left");
        index.removeShared(StorageTier.HOST_PINNED, K2);
        index.removeShared(StorageTier.DISK, K2);
        index.removeGpu(3, K1);
        assertEquals(0, index.keyCount());
    }

    /**
     * An engine that keeps storing and removing blocks (an LRU turning over) holds few at a time: what the index
     * remembers of it stays in proportion to those few, and a slot it lets go and takes again for another of its keys
     * is cleared once.
     */
    @Test
    void anOwnersChurnLeavesItsListInProportionToWhatItHolds() {
        for (long k = 1; k <= 10; k++) {
            index.storeGpu(1, k);
        }
        index.storeGpu(2, 5);
        for (long k = 1_000; k < 101_000; k++) {
            index.storeGpu(1, k);
            index.removeGpu(1, k);
            // the freed slot goes to the next key: the same slot comes back to owner 1 again and again
        }
        assertTrue(index.gpuEntries(1) <= 2 * 10 + 16 + 1, "entries: " + index.gpuEntries(1));
        assertEquals(10, index.keyCount());
        index.storeGpu(1, 7);
        index.removeGpu(1, 7);
        index.storeGpu(1, 7);
        assertArrayEquals(new int[] {1, 1, 1, 0, 0, 0}, walk(prompt(7, 11), 1, 2), "7 held again by 1 alone");
        // 7 took back its own slot, which owner 1's list now names twice: compacted, it names each held slot once
        index.compact(1);
        assertEquals(10, index.gpuEntries(1));
        for (long k = 200_000; k < 200_100; k++) {
            index.storeGpu(1, k);
            index.removeGpu(1, k);
        }
        assertTrue(index.gpuEntries(1) <= 2 * 10 + 16 + 1, "entries: " + index.gpuEntries(1));
        index.clearGpu(1);
        assertEquals(0, index.gpuEntries(1));
        assertEquals(1, index.keyCount(), "owner 2's key 5 stays");
        assertArrayEquals(new int[] {0, 0, 0, 1, 1, 1}, walk(prompt(5), 1, 2));
        index.clearGpu(2);
        assertEquals(0, index.keyCount());
    }
}
