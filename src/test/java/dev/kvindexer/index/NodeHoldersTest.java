package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.BitSet;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Holder sets of a fleet of owners, past the first 64 ids and across many pooled sets, against a bitset per node. */
class NodeHoldersTest {
    private static final int NODES = 6_000;
    private static final int OWNERS = 1_000;

    @Test
    void manySharedNodesOfAThousandOwnersKeepTheirSets() {
        NodeRecords records = new NodeRecords(0);
        records.ensure(NODES);
        NodeHolders holders = new NodeHolders(records);
        BitSet[] expected = new BitSet[NODES];
        for (int n = 0; n < NODES; n++) {
            expected[n] = new BitSet();
        }
        SplittableRandom rnd = new SplittableRandom(7);
        long emptyBytes = holders.bytes();
        for (int round = 0; round < 3; round++) {
            for (int k = 0; k < 40_000; k++) {
                int node = rnd.nextInt(NODES);
                int owner = rnd.nextInt(4) == 0 ? rnd.nextInt(64) : rnd.nextInt(OWNERS);
                holders.add(node, owner);
                expected[node].set(owner);
            }
            assertSame(holders, expected);
            assertTrue(holders.bytes() > emptyBytes, "sets past 64 owners are counted");
            // Most nodes drop back to one holder or none, so pooled sets are freed and taken again next round.
            for (int node = 0; node < NODES; node++) {
                BitSet want = expected[node];
                for (int owner = want.nextSetBit(0); owner >= 0; owner = want.nextSetBit(owner + 1)) {
                    if (rnd.nextInt(10) != 0) {
                        holders.remove(node, owner);
                        want.clear(owner);
                    }
                }
            }
            assertSame(holders, expected);
        }
        for (int node = 0; node < NODES; node++) {
            for (int owner : holders.ids(node)) {
                holders.remove(node, owner);
            }
            assertTrue(holders.isEmpty(node));
        }
    }

    private static void assertSame(NodeHolders holders, BitSet[] expected) {
        for (int node = 0; node < NODES; node++) {
            BitSet want = expected[node];
            assertArrayEquals(want.stream().toArray(), holders.ids(node), "node " + node);
            assertEquals(want.cardinality(), holders.count(node), "node " + node);
            assertEquals(want.isEmpty(), holders.isEmpty(node), "node " + node);
            int probe = (node * 31) % OWNERS;
            assertEquals(want.get(probe), holders.has(node, probe), "node " + node + " owner " + probe);
            long[] words = new long[(OWNERS >>> 6) + 1];
            assertEquals(want.cardinality(), holders.wordsInto(node, null, words, words.length), "node " + node);
            assertArrayEquals(Arrays.copyOf(want.toLongArray(), words.length), words, "node " + node);
        }
        assertFalse(holders.has(0, OWNERS + 5));
    }
}
