package dev.kvindexer.index;

import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.ints.IntIterator;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.Arrays;
import java.util.function.IntConsumer;

/**
 * The device-tier prefix tree of docs/protocol/index.md (store, remove, clear, worker removal), keyed by local hash,
 * with engine-hash lookups and reference
 * counts per owner. Nodes are identified by their position: an engine hash stored at a new position moves
 * there (detached subtrees are never re-attached, unlike the reference).
 *
 * <p>Engines that hash alike (vLLM's chained hashes, with one seed) give a shared block the same engine hash in
 * every holder, so one table from engine hash to node serves them all: a holder costs one bit, not an entry in a
 * map of its own (BENCHMARKS.md, memory). An owner's hash that the shared table does not lead to (another engine
 * hash for the same block, or the same hash at another position) is kept in that owner's own map.
 */
final class DeviceTree {
    static final int NONE = -1;

    final DeviceNodes nodes;
    private final int maxNodes;
    private final NodeHolders holders;
    /** Engine hash → the live node first stored under it (its engine-hash column). */
    private final IdsByKey byHash;
    /** (node, owner) → the owner's engine hash for a node, where it differs from the node's own. */
    private final Long2LongOpenHashMap altHashes = new Long2LongOpenHashMap();

    private final LongOpenHashSet repeatScratch = new LongOpenHashSet();
    /** How many passes of the eviction hand a node still survives: two bits, {@link #ageHigh} and {@link #ageLow}. */
    private final IdBits ageHigh = new IdBits();

    private final IdBits ageLow = new IdBits();
    /** Nodes a holder has stored more than once since the node was created: a remove elsewhere skips the counts. */
    private final IdBits copied = new IdBits();

    private int hand = 1;
    private long nodeCount; // nodes with at least one holder, attached or detached
    private long evicted;

    DeviceTree() {
        this(IdsByKey.MAX_IDS);
    }

    /** A tree of at most {@code maxNodes} nodes: past that, storing evicts least recently used blocks first. */
    DeviceTree(int maxNodes) {
        this.maxNodes = maxNodes;
        this.nodes = new DeviceNodes(maxNodes);
        this.holders = nodes.holders;
        this.byHash = new IdsByKey(nodes.records);
    }

    private long entries; // (owner, node) holder pairs

    StoreOutcome store(
            OwnerTable owners,
            long workerId,
            int dpRank,
            boolean hasParent,
            long parentHash,
            long[] blockHashes,
            long[] localHashes) {
        int parent = DeviceNodes.ROOT;
        Owner o;
        if (hasParent) {
            o = owners.find(workerId, dpRank);
            parent = o == null ? NONE : find(o, parentHash);
            if (parent == NONE) {
                return StoreOutcome.PARENT_BLOCK_NOT_FOUND;
            }
        }
        if (!validChain(hasParent, parentHash, blockHashes)) {
            return StoreOutcome.INVALID_BLOCK_SEQUENCE;
        }
        if (nodes.liveCount() > maxNodes - blockHashes.length) {
            // The tree's id space is full (only on a very large heap with a large budget): old blocks make room.
            if (!makeRoom(owners, blockHashes.length)) {
                return StoreOutcome.INDEX_FULL;
            }
            if (hasParent && (parent = find(owners.find(workerId, dpRank), parentHash)) == NONE) {
                return StoreOutcome.PARENT_BLOCK_NOT_FOUND;
            }
        }
        o = owners.intern(workerId, dpRank);
        for (int i = 0; i < blockHashes.length; i++) {
            parent = storeOne(o, parent, blockHashes[i], localHashes[i]);
        }
        return StoreOutcome.OK;
    }

    /** Evicts until {@code n} more nodes fit; false when the tree cannot hold them even empty of everything else. */
    private boolean makeRoom(OwnerTable owners, int n) {
        while (nodes.liveCount() > maxNodes - n) {
            if (evictLeafChain(owners) == 0) {
                return false;
            }
        }
        return true;
    }

    /** Rejects a block equal to its parent's engine hash or repeated within the chain, before applying any. */
    private boolean validChain(boolean hasParent, long parentHash, long[] hashes) {
        int n = hashes.length;
        if (n <= 16) {
            for (int i = 0; i < n; i++) {
                long h = hashes[i];
                if (hasParent && h == parentHash) {
                    return false;
                }
                for (int j = 0; j < i; j++) {
                    if (hashes[j] == h) {
                        return false;
                    }
                }
            }
            return true;
        }
        LongOpenHashSet seen = repeatScratch;
        seen.clear();
        try {
            for (long h : hashes) {
                if ((hasParent && h == parentHash) || !seen.add(h)) {
                    return false;
                }
            }
            return true;
        } finally {
            seen.clear();
        }
    }

    /** The node first stored under an engine hash, or {@link #NONE}; safe beside other queries. */
    int nodeOfEngineHash(long h) {
        return byHash.peek(h);
    }

    /** The node where an owner holds an engine hash, attached or detached, or {@link #NONE}. */
    int find(Owner o, long h) {
        return find(o, byHash.get(h), h);
    }

    /** {@link #find} given the node the shared table lists under {@code h}, or {@link #NONE}. */
    private int find(Owner o, int listed, long h) {
        if (listed != NONE && holders.has(listed, o.id) && hashOf(listed, o.id) == h) {
            return listed;
        }
        Long2IntOpenHashMap own = o.device.byHash;
        return own.isEmpty() ? NONE : own.get(h);
    }

    /** The engine hash an owner holds a node under. */
    long hashOf(int node, int owner) {
        if (!altHashes.isEmpty()) {
            long key = altKey(node, owner);
            if (altHashes.containsKey(key)) {
                return altHashes.get(key);
            }
        }
        return nodes.engine(node);
    }

    private int storeOne(Owner o, int parent, long h, long local) {
        int node = nodes.child(parent, local);
        if (node == NONE) {
            return storeNew(o, parent, h, local);
        }
        if (!ageHigh.get(node)) {
            ageLow.set(node); // stored: spared one pass, unless a query gave it more
        }
        DeviceBlocks held = o.device;
        long blockHash = nodes.engine(node);
        // The node listed under the hash itself is what the shared table would answer, so no probe is needed.
        int before = find(o, h == blockHash && byHash.lists(node) ? node : byHash.get(h), h);
        if (before == node) {
            held.copies.addCopy(h);
            copied.set(node);
            return node;
        }
        if (before != NONE) {
            // The owner's hash was held at another position: it moves here with one copy.
            leave(o, before);
        }
        if (holders.has(node, o.id)) {
            // Already held under another engine hash (block_hash mismatch): the new hash replaces it.
            long old = hashOf(node, o.id);
            held.byHash.remove(old, node);
            held.copies.reset(old);
        } else {
            if (holders.isEmpty(node)) {
                nodeCount++;
            }
            holders.add(node, o.id);
            held.blocks++;
            entries++;
            if (node != parent + 1) {
                listBranch(o, node);
            }
        }
        setHashOf(node, o.id, h);
        if (h != blockHash) {
            held.byHash.put(h, node);
        } else if (!byHash.lists(node) && byHash.putIfAbsent(h, node) != NONE) {
            held.byHash.put(h, node); // the shared entry names another position
        }
        return node;
    }

    /** {@link #storeOne} where the position is new: the node has no holder yet, and its engine hash is {@code h}. */
    private int storeNew(Owner o, int parent, long h, long local) {
        int node = nodes.create(parent, local, h);
        setAge(node, 1);
        DeviceBlocks held = o.device;
        int before = find(o, h);
        if (before != NONE) {
            // The owner's hash was held at another position: it moves here with one copy.
            leave(o, before);
        }
        holders.add(node, o.id);
        nodeCount++;
        held.blocks++;
        entries++;
        if (node != parent + 1) {
            listBranch(o, node);
        }
        if (byHash.putIfAbsent(h, node) != NONE) {
            held.byHash.put(h, node); // the shared entry names another position
        }
        return node;
    }

    int remove(Owner o, long[] blockHashes) {
        if (o == null) {
            return blockHashes.length;
        }
        int missing = 0;
        for (long h : blockHashes) {
            int node = find(o, h);
            if (node == NONE) {
                missing++;
            } else if (!copied.get(node) || o.device.copies.dropCopy(h)) {
                leaveLastCopy(o, node, h);
            }
        }
        branchesLeft(o);
        return missing;
    }

    /** Copies of an engine hash an owner holds (its reference count), 0 when it does not hold it. */
    int copies(Owner o, long h) {
        return find(o, h) == NONE ? 0 : o.device.copies.ofHeld(h);
    }

    /**
     * Takes an owner off every node it holds (an engine's restart, reset or clear, an unregistration). The nodes are
     * found from the root down through those it holds, or, when some are not under others it holds, by a pass over the
     * node columns and the owner's own map.
     */
    void clearOwner(Owner o) {
        IntArrayList mine = heldFromBranches(o);
        if (mine == null) {
            mine = heldFromRoot(o);
        }
        if (mine == null) {
            mine = heldByScan(o);
        }
        for (int i = 0; i < mine.size(); i++) {
            leave(o, mine.getInt(i));
        }
        o.device.clear();
    }

    /** Lists a branch node the owner came to hold. */
    private void listBranch(Owner o, int node) {
        o.device.branches.add(node);
        branchesLeft(o);
    }

    /** The owner's list changed or it left nodes: the list lets go of what it no longer holds once that is most of it. */
    private void branchesLeft(Owner o) {
        if (o.device.branches.size() > 2 * o.device.blocks + 16) {
            dropStaleBranches(o);
        }
    }

    /** Keeps the listed branches the owner still holds, and gives back room far beyond what its blocks could list. */
    private void dropStaleBranches(Owner o) {
        IntArrayList listed = o.device.branches;
        listed.size(distinctBranches(o));
        int room = 2 * o.device.blocks + 16;
        if (listed.elements().length > 2 * room) {
            listed.trim(room);
        }
    }

    /**
     * Sorts the owner's listed branches, keeps each node it still holds as a branch once, and returns how many were
     * kept (at the front).
     */
    private int distinctBranches(Owner o) {
        IntArrayList listed = o.device.branches;
        int[] a = listed.elements();
        int n = listed.size();
        Arrays.sort(a, 0, n);
        int kept = 0;
        for (int i = 0; i < n; i++) {
            int b = a[i];
            if ((kept == 0 || a[kept - 1] != b) && holders.has(b, o.id) && nodes.parent(b) + 1 != b) {
                a[kept++] = b;
            }
        }
        return kept;
    }

    /**
     * The nodes the owner holds, found from its listed branches and the root, each followed down the children laid
     * out after it that it holds: only what it holds is looked at. Null when that finds fewer than it holds (a block
     * whose parent it does not hold, or a branch held some other way), each node found being held and found once.
     */
    IntArrayList heldFromBranches(Owner o) {
        int expected = o.device.blocks;
        IntArrayList found = new IntArrayList(expected);
        chainFrom(DeviceNodes.ROOT, o, found);
        int starts = distinctBranches(o);
        int[] listed = o.device.branches.elements();
        for (int i = 0; i < starts && found.size() <= expected; i++) {
            found.add(listed[i]);
            chainFrom(listed[i], o, found);
        }
        return found.size() == expected ? found : null;
    }

    /** Adds the children laid out one after the other below {@code node} that the owner holds, up to the first it does not. */
    private void chainFrom(int node, Owner o, IntArrayList found) {
        int limit = nodes.idLimit();
        for (int next = node + 1; next < limit && nodes.parent(next) == node && holders.has(next, o.id); next++) {
            found.add(next);
            node = next;
        }
    }

    /**
     * The nodes the owner holds, found from the root down through the ones it holds: what it holds and their children
     * are looked at, not the whole tree. Null when that finds fewer than it holds: a block whose parent it does not
     * hold (a middle block removed) is not under the others.
     */
    private IntArrayList heldFromRoot(Owner o) {
        int expected = o.device.blocks;
        IntArrayList found = new IntArrayList(expected);
        IntArrayList next = new IntArrayList();
        next.add(DeviceNodes.ROOT);
        IntConsumer visit = child -> {
            if (holders.has(child, o.id)) {
                found.add(child);
                next.add(child);
            }
        };
        while (!next.isEmpty() && found.size() <= expected) {
            nodes.forEachChild(next.popInt(), visit);
        }
        return found.size() == expected ? found : null;
    }

    /** The nodes the owner holds, every node looked at. */
    IntArrayList heldByScan(Owner o) {
        IntArrayList mine = new IntArrayList(o.device.blocks);
        int limit = nodes.idLimit();
        for (int node = 1; node < limit; node++) {
            if (holders.has(node, o.id) && byHash.lists(node) && hashOf(node, o.id) == nodes.engine(node)) {
                mine.add(node);
            }
        }
        for (IntIterator it = o.device.byHash.values().iterator(); it.hasNext(); ) {
            int node = it.nextInt();
            if (!(hashOf(node, o.id) == nodes.engine(node) && byHash.lists(node))) {
                mine.add(node);
            }
        }
        return mine;
    }

    /**
     * Takes the owner off a node, with every copy; an emptied node is freed and its subtree detached
     * (docs/protocol/index.md#remove).
     */
    private void leave(Owner o, int node) {
        long h = hashOf(node, o.id);
        o.device.copies.reset(h);
        leaveLastCopy(o, node, h);
    }

    /** {@link #leave} once the owner's last copy of {@code h} is already dropped. */
    private void leaveLastCopy(Owner o, int node, long h) {
        DeviceBlocks held = o.device;
        if (!held.byHash.isEmpty()) {
            held.byHash.remove(h, node);
        }
        holders.remove(node, o.id);
        forgetHashOf(node, o.id);
        held.blocks--;
        entries--;
        if (holders.isEmpty(node)) {
            nodeCount--;
            byHash.remove(nodes.engine(node), node);
            copied.clear(node);
            nodes.release(node);
        }
    }

    private void setHashOf(int node, int owner, long h) {
        if (h == nodes.engine(node)) {
            forgetHashOf(node, owner);
        } else {
            altHashes.put(altKey(node, owner), h);
        }
    }

    private void forgetHashOf(int node, int owner) {
        if (!altHashes.isEmpty()) {
            altHashes.remove(altKey(node, owner));
        }
    }

    private static long altKey(int node, int owner) {
        return (long) node << 32 | (owner & 0xFFFFFFFFL);
    }

    /** Nodes evicted over the tree's life. */
    long evicted() {
        return evicted;
    }

    long nodeCount() {
        return nodeCount;
    }

    long entryCount() {
        return entries;
    }

    /** Heap held by the tree's live nodes and its tables (the owners' own maps are the owner table's). */
    long bytes() {
        return nodes.bytes()
                + byHash.bytes()
                + HeapSizes.openHashMap(altHashes.size(), 16)
                + ageHigh.bytes()
                + ageLow.bytes()
                + copied.bytes();
    }

    /**
     * Marks the deepest block a query reached: spared three passes of the eviction hand. Queries may run on several
     * threads at once.
     */
    void touch(int node) {
        ageHigh.setShared(node);
        ageLow.setShared(node);
    }

    /**
     * Evicts one least recently used leaf chain: a leaf, then each parent that it leaves childless and as old. Age is
     * a CLOCK over node ids with a two-bit counter: a store sets it to one and a query to three, and each pass of the
     * hand takes one off, so a queried block outlives blocks only stored. Every holder of an evicted node
     * forgets it, so a query can only miss it, never report it. Returns the nodes evicted, 0 when the tree is empty.
     */
    int evictLeafChain(OwnerTable owners) {
        int limit = nodes.idLimit();
        if (nodeCount == 0) {
            return 0;
        }
        for (long scanned = 0; scanned < 4L * limit; scanned++) { // an age of three takes three passes
            int id = hand;
            hand = id + 1 >= limit ? 1 : id + 1;
            if (id >= limit || !nodes.isLive(id)) {
                continue;
            }
            if (age(id) > 0) {
                // Aged on inner nodes too, so that a chain whose leaf goes can follow it up to the last touch.
                setAge(id, age(id) - 1);
                continue;
            }
            if (nodes.childCount(id) > 0) {
                continue;
            }
            int chain = 0;
            for (int node = id; ; ) {
                int parent = nodes.parent(node);
                evict(owners, node);
                chain++;
                if (parent <= DeviceNodes.ROOT
                        || !nodes.isLive(parent)
                        || nodes.childCount(parent) > 0
                        || age(parent) > 0) {
                    evicted += chain;
                    return chain;
                }
                node = parent;
            }
        }
        return 0;
    }

    private int age(int node) {
        return (ageHigh.get(node) ? 2 : 0) + (ageLow.get(node) ? 1 : 0);
    }

    private void setAge(int node, int age) {
        if ((age & 2) != 0) {
            ageHigh.set(node);
        } else {
            ageHigh.clear(node);
        }
        if ((age & 1) != 0) {
            ageLow.set(node);
        } else {
            ageLow.clear(node);
        }
    }

    private void evict(OwnerTable owners, int node) {
        for (int id : holders.ids(node)) {
            Owner o = owners.byIdToChange(id);
            leave(o, node);
            branchesLeft(o);
        }
    }
}
