package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The KV block index of one (model, tenant) partition (SPEC §6): a device-tier prefix tree plus
 * lower-tier edge indexes. Single-threaded by contract: only its partition actor touches it.
 *
 * <p>Deliberate choices: every (worker, dp_rank, tier, engine hash) is reference counted (a block stored
 * twice needs two removes); Cleared is scoped to the emitting (worker, dp_rank) (SPEC §6.4 [REC]); an
 * engine hash stored at a new position moves there, and detached subtrees are never re-attached.
 */
public final class PartitionIndex {
    /** Marks depth-1 nodes in the dump walk, whose chain is just their own holders. */
    private static final long[] AT_ROOT = new long[0];
    /** {cpu, disk} = {0, 0}: the answer without shared store owners, shared so a query allocates nothing for it. */
    private static final int[] NO_SHARED_REACH = new int[2];

    private final int blockSize;
    private final OwnerTable owners = new OwnerTable();
    private final DeviceTree tree = new DeviceTree();
    private final LowerTierIndex[] lower = new LowerTierIndex[LowerTiers.COUNT];
    private final Matcher matcher = new Matcher(tree, lower, owners);

    public PartitionIndex(int blockSize) {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be positive: " + blockSize);
        }
        this.blockSize = blockSize;
    }

    public int blockSize() {
        return blockSize;
    }

    public StoreOutcome store(long workerId, int dpRank, StorageTier tier, boolean hasParent, long parentHash,
                              long[] blockHashes, long[] tokensHashes) {
        if (blockHashes.length != tokensHashes.length) {
            throw new IllegalArgumentException("blockHashes and tokensHashes differ in length");
        }
        if (tier == StorageTier.DEVICE) {
            if (owners.isStoreWorker(workerId)) {
                return StoreOutcome.STORE_DEVICE_TIER;
            }
            return tree.store(owners, workerId, dpRank, hasParent, parentHash, blockHashes, tokensHashes);
        }
        LowerTierIndex t = lowerTier(tier);
        t.store(owners.intern(workerId, dpRank), hasParent, parentHash, blockHashes, tokensHashes);
        return StoreOutcome.OK;
    }

    /** Removes one copy of each hash; returns how many hashes the owner did not hold in that tier. */
    public int remove(long workerId, int dpRank, StorageTier tier, long[] blockHashes) {
        Owner o = owners.find(workerId, dpRank);
        if (o == null) {
            return blockHashes.length;
        }
        if (tier == StorageTier.DEVICE) {
            return tree.remove(o, blockHashes);
        }
        LowerTierIndex t = lower[LowerTiers.slot(tier)];
        return t == null ? blockHashes.length : t.remove(o, blockHashes);
    }

    /** AllBlocksCleared from (worker, dp_rank): drops that owner from every tier. */
    public void clear(long workerId, int dpRank) {
        Owner o = owners.find(workerId, dpRank);
        if (o != null) {
            clearOwner(o);
        }
    }

    public void removeWorker(long workerId) {
        for (Owner o : owners.ofWorker(workerId)) {
            clearOwner(o);
            owners.release(o);
        }
    }

    public void removeWorkerDpRank(long workerId, int dpRank) {
        Owner o = owners.find(workerId, dpRank);
        if (o != null) {
            clearOwner(o);
            owners.release(o);
        }
    }

    private void clearOwner(Owner o) {
        for (LowerTierIndex t : lower) {
            if (t != null) {
                t.clearOwner(o);
            }
        }
        tree.clearOwner(o);
    }

    /**
     * Device match plus lower-tier extension for a prompt's local hashes: one entry per owner with at least
     * one block in any tier, in no particular order. Shared store owners are never entries: their blocks extend
     * the others' walks.
     */
    public List<OwnerMatch> match(long[] localHashes) {
        return matcher.match(localHashes);
    }

    /**
     * The local hashes of a prompt given as rolling sequence hashes (SPEC §2.6), as far as this partition holds its
     * prefix in any tier; matching them gives what a token query of the same prompt gives.
     */
    public long[] localHashesOfSequence(long[] sequenceHashes) {
        return SequencePath.localHashes(tree, lower, sequenceHashes);
    }

    /**
     * Marks a worker as a Mooncake Store (SPEC §5.3), or ordinary again: a shared store owner's CPU and disk blocks
     * extend every owner's lower-tier walk, and its device-tier blocks are refused.
     */
    public void markSharedStore(long workerId, boolean store) {
        owners.markStore(workerId, store);
    }

    /**
     * What the shared store owners alone hold of a prompt from its first block: the cumulative cpu and disk reach, in
     * blocks, of an owner with nothing of its own, as {@code {cpu, disk}}; {@code {0, 0}} without shared owners. The
     * array is the caller's to read, not to change.
     */
    public int[] sharedReach(long[] localHashes) {
        return owners.anyStore() ? matcher.sharedReach(localHashes) : NO_SHARED_REACH;
    }

    /**
     * Every held block as a single-block stored event, device tier breadth-first (parents before children,
     * each owner's own engine hashes), then the lower tiers. A device block is emitted for an owner only
     * when the owner also holds every ancestor: anything else could neither be replayed nor matched. A block held
     * more than once is followed by {@link DumpSink#copies}.
     */
    public void dump(DumpSink sink) {
        ArrayDeque<DeviceNode> queue = new ArrayDeque<>();
        ArrayDeque<long[]> chains = new ArrayDeque<>(); // owners holding the whole path to the queued node
        tree.root.forEachChild(c -> {
            queue.add(c);
            chains.add(AT_ROOT);
        });
        while (!queue.isEmpty()) {
            DeviceNode node = queue.poll();
            long[] parentChain = chains.poll();
            int words = node.wordCount();
            long[] chain = new long[words];
            DeviceNode parent = node.parent;
            for (int w = 0; w < words; w++) {
                long bits = node.word(w);
                if (parentChain != AT_ROOT) {
                    bits &= w < parentChain.length ? parentChain[w] : 0L;
                }
                chain[w] = bits;
                while (bits != 0) {
                    int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                    bits &= bits - 1;
                    Owner o = owners.byId(id);
                    boolean hasParent = parentChain != AT_ROOT;
                    long hash = node.hashOf(id);
                    sink.stored(o.workerId, o.dpRank, StorageTier.DEVICE, hasParent,
                            hasParent ? parent.hashOf(id) : 0L, hash, node.localHash);
                    reportCopies(sink, o.device.copies(hash));
                }
            }
            node.forEachChild(c -> {
                queue.add(c);
                chains.add(chain);
            });
        }
        for (LowerTierIndex t : lower) {
            if (t == null) {
                continue;
            }
            t.forEachEdge(e -> {
                for (int id : e.holderIds()) {
                    Owner o = owners.byId(id);
                    sink.stored(o.workerId, o.dpRank, t.tier, e.hasParent, e.parentHash, e.childHash, e.localHash);
                    reportCopies(sink, o.lower(t.slot).copies(e.childHash));
                }
            });
        }
    }

    private static void reportCopies(DumpSink sink, int copies) {
        if (copies > 1) {
            sink.copies(copies);
        }
    }

    private LowerTierIndex lowerTier(StorageTier tier) {
        int slot = LowerTiers.slot(tier);
        LowerTierIndex t = lower[slot];
        if (t == null) {
            lower[slot] = t = new LowerTierIndex(tier, owners);
        }
        return t;
    }

    // ---- size figures and inspection ----

    /** Device blocks (tree nodes) held by at least one owner, reachable or detached. */
    public long blockCount() {
        return tree.nodeCount();
    }

    /** Device (owner, block) holder pairs. */
    public long holderEntryCount() {
        return tree.entryCount();
    }

    /** Edges of one lower tier (0 for the device tier or an unused tier). */
    public int lowerTierEdgeCount(StorageTier tier) {
        if (tier == StorageTier.DEVICE) {
            return 0;
        }
        LowerTierIndex t = lower[LowerTiers.slot(tier)];
        return t == null ? 0 : t.edgeCount();
    }

    /** Lower-tier blocks rejected because their edge already existed with another child hash. */
    public long lowerTierConflicts() {
        long n = 0;
        for (LowerTierIndex t : lower) {
            n += t == null ? 0 : t.conflicts();
        }
        return n;
    }

    /** Interned (worker, dp_rank) owners. */
    public int ownerCount() {
        return owners.size();
    }

    public boolean isEmpty() {
        if (tree.nodeCount() != 0) {
            return false;
        }
        for (LowerTierIndex t : lower) {
            if (t != null && t.edgeCount() != 0) {
                return false;
            }
        }
        return true;
    }

    /** Distinct engine hashes an owner holds in a tier (the size of its lookup map). */
    public int heldBlocks(long workerId, int dpRank, StorageTier tier) {
        Owner o = owners.find(workerId, dpRank);
        return o == null ? 0 : o.held(tier);
    }

    /** Copies of one engine hash an owner holds in a tier (its reference count). */
    public int copies(long workerId, int dpRank, StorageTier tier, long blockHash) {
        Owner o = owners.find(workerId, dpRank);
        if (o == null) {
            return 0;
        }
        if (tier == StorageTier.DEVICE) {
            return o.device.copies(blockHash);
        }
        Holdings<LowerEdge> h = o.lowerIfAny(LowerTiers.slot(tier));
        return h == null ? 0 : h.copies(blockHash);
    }

    /** Holders of the device node at a path of local hashes from the root; empty when there is none. */
    public List<OwnerKey> holdersAt(long... localPath) {
        DeviceNode node = nodeAt(localPath);
        return node == null ? List.of() : keys(node);
    }

    /** Children of the device node at a path of local hashes (the empty path is the root); -1 if absent. */
    public int childCountAt(long... localPath) {
        DeviceNode node = nodeAt(localPath);
        return node == null ? -1 : node.childCount();
    }

    /** Holders of the device node that an owner maps an engine hash to (attached or detached). */
    public List<OwnerKey> holdersOfBlock(long workerId, int dpRank, long blockHash) {
        Owner o = owners.find(workerId, dpRank);
        DeviceNode node = o == null ? null : o.device.byHash.get(blockHash);
        return node == null ? List.of() : keys(node);
    }

    private DeviceNode nodeAt(long[] localPath) {
        DeviceNode node = tree.root;
        for (int i = 0; i < localPath.length && node != null; i++) {
            node = node.child(localPath[i]);
        }
        return node;
    }

    private List<OwnerKey> keys(DeviceNode node) {
        List<OwnerKey> out = new ArrayList<>();
        for (int id : node.holderIds()) {
            Owner o = owners.byId(id);
            out.add(new OwnerKey(o.workerId, o.dpRank));
        }
        return out;
    }
}
