package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The column store under the device tree: the engine-hash table, holder sets, and node ids with their children. */
class CompactTreeTest {

    @Test
    void engineHashTableFindsEveryListedNodeThroughGrowthAndRemovals() {
        int n = 200_000; // past 2^16 ids, so the slot layout widens while filled
        NodeRecords engine = new NodeRecords(-1);
        engine.ensure(n);
        IdsByKey table = new IdsByKey(engine);
        SplittableRandom rnd = new SplittableRandom(7);
        for (int id = 0; id < n; id++) {
            // Small sequential hashes as tools and tests send them, and random ones as engines do.
            engine.setEngine(id, id % 2 == 0 ? id : rnd.nextLong());
            assertEquals(-1, table.putIfAbsent(engine.engine(id), id));
        }
        assertEquals(n, table.size());
        for (int id = 0; id < n; id++) {
            assertEquals(id, table.get(engine.engine(id)));
        }
        for (int id = 0; id < n; id += 3) {
            table.remove(engine.engine(id), id);
        }
        for (int id = 0; id < n; id++) {
            assertEquals(id % 3 == 0 ? -1 : id, table.get(engine.engine(id)), "node " + id);
            assertEquals(id % 3 != 0, table.lists(id));
        }
        assertEquals(-1, table.get(-42L));
    }

    @Test
    void engineHashTableKeepsTheFirstNodeOfAHashAndRemovesOnlyThatNode() {
        NodeRecords engine = new NodeRecords(-1);
        engine.ensure(3);
        engine.setEngine(0, 99L);
        engine.setEngine(1, 99L);
        IdsByKey table = new IdsByKey(engine);
        assertEquals(-1, table.putIfAbsent(99L, 0));
        assertEquals(0, table.putIfAbsent(99L, 1), "a second node with the hash is not listed");
        table.remove(99L, 1);
        assertEquals(0, table.get(99L), "removing an unlisted node leaves the listed one");
        table.remove(99L, 0);
        assertEquals(-1, table.get(99L));
        assertEquals(0, table.size());
    }

    @Test
    void holderSetsGoFromOneIdToAPooledSetAndBack() {
        NodeRecords records = new NodeRecords(-1);
        records.ensure(4);
        NodeHolders holders = new NodeHolders(records);
        assertTrue(holders.isEmpty(1));
        holders.add(1, 5);
        assertEquals(1L << 5, holders.word0(1));
        assertArrayEquals(new int[] {5}, holders.ids(1));
        holders.add(1, 70);
        holders.add(1, 130);
        holders.add(1, 5);
        assertEquals(3, holders.count(1));
        assertArrayEquals(new int[] {5, 70, 130}, holders.ids(1));
        assertEquals(3, holders.wordCount(1));
        assertEquals(1L << (70 - 64), holders.word(1, 1));
        assertEquals(1L << 5, holders.word0(1), "the walk's word holds ids below 64 only");
        assertTrue(holders.has(1, 130));
        assertFalse(holders.has(1, 131));
        holders.remove(1, 5);
        holders.remove(1, 130);
        assertArrayEquals(new int[] {70}, holders.ids(1), "back to a single holder");
        assertEquals(0L, holders.word0(1));
        assertEquals(2, holders.wordCount(1));
        holders.remove(1, 70);
        assertTrue(holders.isEmpty(1));

        // A freed pool entry is reused clean.
        holders.add(2, 1);
        holders.add(2, 2);
        assertArrayEquals(new int[] {1, 2}, holders.ids(2));
        holders.add(3, 9);
        holders.remove(3, 9);
        assertTrue(holders.isEmpty(3));
    }

    @Test
    void aChainTakesConsecutiveIdsAndAnEmptiedNodeDetachesItsChildren() {
        DeviceNodes nodes = new DeviceNodes(1000);
        int a = nodes.create(DeviceNodes.ROOT, 11, 101);
        int b = nodes.create(a, 12, 102);
        int c = nodes.create(b, 13, 103);
        assertEquals(a + 1, b);
        assertEquals(b + 1, c);
        int side = nodes.create(a, 22, 202); // a's second child cannot sit at a + 1
        assertEquals(b, nodes.child(a, 12));
        assertEquals(side, nodes.child(a, 22));
        assertEquals(-1, nodes.child(a, 13));
        assertEquals(2, nodes.childCount(a));
        IntArrayList children = new IntArrayList();
        nodes.forEachChild(a, children::add);
        assertEquals(2, children.size());
        assertTrue(children.contains(b) && children.contains(side));

        nodes.release(a);
        assertEquals(-1, nodes.child(DeviceNodes.ROOT, 11));
        assertEquals(DeviceNodes.NO_PARENT, nodes.parent(b));
        assertEquals(DeviceNodes.NO_PARENT, nodes.parent(side));
        assertEquals(b, nodes.parent(c), "below the emptied node a detached subtree keeps its shape");
        assertFalse(nodes.isLive(a));

        // The freed id is reused, and the new node there has no children.
        int again = nodes.create(DeviceNodes.ROOT, 11, 111);
        assertEquals(a, again);
        assertEquals(0, nodes.childCount(again));
        assertEquals(-1, nodes.child(again, 12));
    }

    @Test
    void freedIdsAreReusedLowestFirstAndAnyOfThemCanBeTakenForAChild() {
        DeviceNodes nodes = new DeviceNodes(1000);
        int p = DeviceNodes.ROOT;
        for (int i = 1; i <= 6; i++) {
            p = nodes.create(p, i, i);
            assertEquals(i, p);
        }
        nodes.release(5);
        nodes.release(3);
        nodes.release(6);
        assertEquals(3, nodes.create(2, 33, 33), "the id after the parent, from the middle of the free list");
        assertEquals(5, nodes.create(DeviceNodes.ROOT, 55, 55), "then the lowest free");
        assertEquals(6, nodes.create(DeviceNodes.ROOT, 66, 66));
        assertEquals(7, nodes.create(DeviceNodes.ROOT, 77, 77), "none free: a new id");
        assertEquals(3, nodes.child(2, 33));
        assertEquals(5, nodes.child(DeviceNodes.ROOT, 55));
        assertEquals(7, nodes.child(DeviceNodes.ROOT, 77));
        assertEquals(33, nodes.local(3), "a reused id's record is the new node's");
    }

    @Test
    void aChildTakesTheIdAfterItsParentWhenItIsFree() {
        DeviceNodes nodes = new DeviceNodes(1000);
        int a = nodes.create(DeviceNodes.ROOT, 1, 1);
        int b = nodes.create(a, 2, 2);
        int other = nodes.create(DeviceNodes.ROOT, 3, 3);
        nodes.release(b);
        int b2 = nodes.create(a, 4, 4);
        assertEquals(a + 1, b2);
        assertEquals(b2, nodes.child(a, 4));
        assertEquals(-1, nodes.child(a, 2));
        assertEquals(other, nodes.child(DeviceNodes.ROOT, 3));
    }

    @Test
    void aChainStoredWhereALeafEvictedChainWasTakesItsIdsInOrder() {
        DeviceNodes nodes = new DeviceNodes(1000);
        int a = nodes.create(DeviceNodes.ROOT, 1, 1);
        int b = nodes.create(a, 2, 2);
        int c = nodes.create(b, 3, 3);
        int d = nodes.create(DeviceNodes.ROOT, 9, 9);
        nodes.create(d, 10, 10); // d's next id is taken: d's new child comes from the free ids
        // An engine evicts leaves first, so the chain's ids are freed highest first.
        nodes.release(c);
        nodes.release(b);
        nodes.release(a);
        int x = nodes.create(d, 4, 4);
        int y = nodes.create(x, 5, 5);
        int z = nodes.create(y, 6, 6);
        assertEquals(a, x, "the new chain starts at the lowest id of the free run");
        assertEquals(x + 1, y);
        assertEquals(y + 1, z);
    }

    @Test
    void freeIdsFindTheNextMemberAcrossEmptyWordsAndLevels() {
        FreeIds free = new FreeIds();
        java.util.TreeSet<Integer> model = new java.util.TreeSet<>();
        java.util.Random random = new java.util.Random(7);
        int span = 1 << 20; // past two summary levels
        for (int step = 0; step < 200_000; step++) {
            int id = random.nextInt(step % 1000 < 500 ? 300 : span); // dense near 0, sparse far out
            if (model.contains(id)) {
                free.remove(id);
                model.remove(id);
            } else {
                free.add(id);
                model.add(id);
            }
            int from = random.nextInt(span + 64);
            Integer expected = model.ceiling(from);
            assertEquals(expected == null ? -1 : expected, free.next(from), "next from " + from);
            assertEquals(model.size(), free.size());
        }
        for (int id : model) {
            assertTrue(free.contains(id));
        }
        assertEquals(model.isEmpty() ? -1 : model.first(), free.next(0));
    }
}
