package dev.kvindexer.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The cache model: prefix reuse, leaf-only LRU eviction, capacity, host offload, and truth = replayed events. */
class KvCacheModelTest {
    private static final int BS = 4;

    /** A prompt of whole blocks; block "letter" k is tokens k*100 .. k*100+3, so equal letters mean equal tokens. */
    private static int[] prompt(int... blocks) {
        int[] t = new int[blocks.length * BS];
        for (int b = 0; b < blocks.length; b++) {
            for (int i = 0; i < BS; i++) {
                t[b * BS + i] = blocks[b] * 100 + i;
            }
        }
        return t;
    }

    private static BlockChain chain(int... blocks) {
        return EngineHashKind.SEQUENCE.chain(prompt(blocks), BS, 0);
    }

    private static KvCacheModel model(int capacity, int hostCapacity) {
        return new KvCacheModel(7, 0, BS, capacity, hostCapacity, "GPU", "CPU");
    }

    private static long[] hashes(BlockChain c, int... positions) {
        return Arrays.stream(positions).mapToLong(i -> c.engineHashes()[i]).toArray();
    }

    @Test
    void firstRequestStoresOneRootChain() {
        KvCacheModel m = model(8, 0);
        BlockChain c = chain(1, 2, 3);
        List<EngineEvent> events = m.admit(c);
        assertEquals(1, events.size());
        EngineEvent.Store s = (EngineEvent.Store) events.get(0);
        assertArrayEquals(c.engineHashes(), s.blockHashes());
        assertNull(s.parent());
        assertArrayEquals(prompt(1, 2, 3), s.tokenIds());
        assertEquals(BS, s.blockSize());
        assertEquals("GPU", s.medium());
    }

    @Test
    void prefixReuseStoresOnlyTheMissingBlocksUnderTheLastCachedOne() {
        KvCacheModel m = model(8, 0);
        BlockChain first = chain(1, 2, 3);
        m.admit(first);
        BlockChain second = chain(1, 2, 4, 5);
        List<EngineEvent> events = m.admit(second);
        assertEquals(1, events.size());
        EngineEvent.Store s = (EngineEvent.Store) events.get(0);
        assertArrayEquals(hashes(second, 2, 3), s.blockHashes());
        assertEquals(first.engineHashes()[1], s.parent());
        assertArrayEquals(Arrays.copyOfRange(prompt(1, 2, 4, 5), 2 * BS, 4 * BS), s.tokenIds());
        assertEquals(5, m.deviceBlocks());
    }

    @Test
    void fullyCachedRequestEmitsNothingAndPartialTailIsIgnored() {
        KvCacheModel m = model(8, 0);
        m.admit(chain(1, 2));
        int[] withTail = Arrays.copyOf(prompt(1, 2), 2 * BS + 3);
        assertEquals(List.of(), m.admit(EngineHashKind.SEQUENCE.chain(withTail, BS, 0)));
        assertEquals(2, m.deviceBlocks());
    }

    @Test
    void evictsLeastRecentlyUsedLeavesChildrenFirstAndNeverThePinnedPrefix() {
        KvCacheModel m = model(3, 0);
        BlockChain a = chain(1);
        m.admit(a);
        BlockChain bc = chain(2, 3);
        m.admit(bc);
        // LRU order now: A (oldest), C, B. A is the next request's prefix, so it is pinned; C then B go, leaf first.
        BlockChain ade = chain(1, 4, 5);
        List<EngineEvent> events = m.admit(ade);
        assertEquals(2, events.size());
        EngineEvent.Remove r = (EngineEvent.Remove) events.get(0);
        assertArrayEquals(hashes(bc, 1, 0), r.blockHashes());
        assertEquals("GPU", r.medium());
        EngineEvent.Store s = (EngineEvent.Store) events.get(1);
        assertArrayEquals(hashes(ade, 1, 2), s.blockHashes());
        assertEquals(a.engineHashes()[0], s.parent());
        assertEquals(3, m.deviceBlocks());
    }

    @Test
    void aRecentlyReusedPrefixOutlivesOlderLeaves() {
        KvCacheModel m = model(4, 0);
        BlockChain shared = chain(1, 2);
        m.admit(shared);
        m.admit(chain(9));
        m.admit(chain(1, 2, 3)); // touches 1, 2 again: 9 is now the oldest
        List<EngineEvent> events = m.admit(chain(8, 7));
        EngineEvent.Remove r = (EngineEvent.Remove) events.get(0);
        // 9 first (oldest), then 3: the leaf of the recently used chain, never 1 or 2 while 3 is cached.
        assertArrayEquals(new long[] {chain(9).engineHashes()[0], chain(1, 2, 3).engineHashes()[2]}, r.blockHashes());
    }

    @Test
    void requestLongerThanTheCacheKeepsItsFirstCapacityBlocks() {
        KvCacheModel m = model(3, 0);
        BlockChain c = chain(1, 2, 3, 4, 5);
        EngineEvent.Store s = (EngineEvent.Store) m.admit(c).get(0);
        assertArrayEquals(hashes(c, 0, 1, 2), s.blockHashes());
        assertEquals(3, m.deviceBlocks());
    }

    @Test
    void evictedBlocksAreOffloadedToTheHostTierWhichEvictsItsOwnLru() {
        KvCacheModel m = model(2, 2);
        BlockChain ab = chain(1, 2);
        m.admit(ab);
        BlockChain cd = chain(3, 4);
        List<EngineEvent> events = m.admit(cd);
        assertEquals(4, events.size());
        assertStore(events.get(0), "CPU", ab.engineHashes()[0], new long[] {ab.engineHashes()[1]});
        assertStore(events.get(1), "CPU", null, new long[] {ab.engineHashes()[0]});
        assertArrayEquals(hashes(ab, 1, 0), ((EngineEvent.Remove) events.get(2)).blockHashes());
        assertStore(events.get(3), "GPU", null, cd.engineHashes());

        events = m.admit(chain(5, 6));
        EngineEvent.Remove hostDrop = (EngineEvent.Remove) events.get(0);
        assertEquals("CPU", hostDrop.medium());
        assertArrayEquals(hashes(ab, 1, 0), hostDrop.blockHashes());
        assertEquals(2, m.hostBlocks());
        assertEquals(2, m.deviceBlocks());
        assertTrue(m.held()
                .contains(new HeldBlock(
                        7, 0, HeldBlock.HOST_PINNED, cd.engineHashes()[1], cd.engineHashes()[0], cd.localHashes()[1])));
    }

    @Test
    void aBlockAlreadyOnTheHostIsNotStoredThereTwice() {
        KvCacheModel m = model(1, 2);
        m.admit(chain(1));
        m.admit(chain(2)); // 1 → host
        m.admit(chain(1)); // 2 → host, 1 back on device (and still on host)
        List<EngineEvent> events = m.admit(chain(3)); // 1 leaves the device; the host already has it
        assertEquals(2, events.size());
        assertEquals("GPU", ((EngineEvent.Remove) events.get(0)).medium());
        assertEquals(3, m.held().size());
    }

    @Test
    void truthEqualsStoredMinusRemovedAcrossRandomSharedPrefixTraffic() {
        for (int hostCapacity : new int[] {0, 40}) {
            KvCacheModel m = model(24, hostCapacity);
            EventReplay replay = new EventReplay(7, 0);
            SplittableRandom rnd = new SplittableRandom(11);
            for (int r = 0; r < 2_000; r++) {
                List<Integer> blocks = new ArrayList<>();
                int depth = 1 + rnd.nextInt(10);
                int family = rnd.nextInt(6);
                for (int i = 0; i < depth; i++) {
                    // Shared prefixes: early positions come from a few values, later ones diverge more.
                    blocks.add(family * 1000 + i * 10 + rnd.nextInt(1 + i / 2));
                }
                List<EngineEvent> events = m.admit(
                        chain(blocks.stream().mapToInt(Integer::intValue).toArray()));
                for (EngineEvent e : events) {
                    replay.apply(e);
                    replay.assertDeviceTreeClosed();
                }
                assertTrue(m.deviceBlocks() <= 24);
                assertTrue(m.hostBlocks() <= hostCapacity);
                assertEquals(replay.held(), m.held(), "after request " + r);
            }
        }
    }

    private static void assertStore(EngineEvent e, String medium, Long parent, long[] hashes) {
        EngineEvent.Store s = (EngineEvent.Store) e;
        assertEquals(medium, s.medium());
        assertEquals(parent, s.parent());
        assertArrayEquals(hashes, s.blockHashes());
    }
}
