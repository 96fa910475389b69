package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.event.WorkerRank;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.hash.LocalHashes;
import java.util.ArrayList;
import java.util.List;

/**
 * The KV block index of one (model, tenant) partition (docs/protocol/index.md): a device-tier prefix tree plus
 * lower-tier edge indexes. Changes are single-threaded by contract (only its partition actor makes them); the
 * matches ({@link #matchOwners}, {@link #matchTiered}, {@link #sharedReach}, {@link #localHashesOfSequence},
 * {@link #engineHashes}) may run on
 * several threads at once while no change runs, which the partition's lock ensures.
 *
 * <p>Deliberate choices: every (worker, dp_rank, tier, engine hash) is reference counted (a block stored
 * twice needs two removes); Cleared is scoped to the emitting (worker, dp_rank) (this project's choice,
 * docs/protocol/index.md#clear); an
 * engine hash stored at a new position moves there, and detached subtrees are never re-attached.
 *
 * <p>Blocks stored without tokens (docs/protocol/events.md#standardized-events-into-index-operations) live in a second
 * index of this class whose "local hash" of a block is
 * its rolling sequence hash (docs/protocol/hashing.md#rolling-sequence-hash): a sequence hash names a prefix just as a
 * path of local hashes does, so the
 * same tree, tiers, reference counts and shared stores apply, and a token query finds those blocks by chaining its
 * local hashes. An owner's prefix is answered from one index or the other, never stitched across both.
 */
public final class PartitionIndex {
    /** {cpu, disk} = {0, 0}: the answer without shared store owners, shared so a query allocates nothing for it. */
    private static final int[] NO_SHARED_REACH = new int[2];

    private final int blockSize;
    final OwnerTable owners = new OwnerTable();
    final DeviceTree tree;
    final LowerTierIndex[] lower = new LowerTierIndex[LowerTiers.COUNT];
    /** A query walk's scratch per thread: queries may read the index on several threads while no change runs. */
    private final ThreadLocal<Matcher> matchers;

    private final EngineChain chains;
    /** Blocks placed by sequence hash; null until the first one, so partitions without them pay nothing. */
    PartitionIndex bySequence;
    /** The least heap one evicted node gives back: its record. */
    private static final int NODE_BYTES_FREED = NodeRecords.BYTES;

    public PartitionIndex(int blockSize) {
        this(blockSize, IdsByKey.MAX_IDS);
    }

    /** An index whose device tree holds at most {@code maxNodes} blocks (tests of the id space's end). */
    PartitionIndex(int blockSize, int maxNodes) {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be positive: " + blockSize);
        }
        this.blockSize = blockSize;
        this.tree = new DeviceTree(maxNodes);
        this.matchers = ThreadLocal.withInitial(() -> new Matcher(tree, lower, owners));
        this.chains = new EngineChain(tree, lower, owners);
    }

    public int blockSize() {
        return blockSize;
    }

    public StoreOutcome store(
            long workerId,
            int dpRank,
            StorageTier tier,
            boolean hasParent,
            long parentHash,
            long[] blockHashes,
            long[] tokensHashes) {
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

    /**
     * Blocks known only by their rolling sequence hashes, which are also their engine hashes (a standardized
     * {@code stored} event without {@code token_ids},
     * docs/protocol/events.md#standardized-events-into-index-operations); {@code parentHash} is the sequence hash
     * before the first. Correct as long as the publisher chained with seed 1337
     * (docs/protocol/hashing.md#rolling-sequence-hash).
     */
    public StoreOutcome storeBySequence(
            long workerId, int dpRank, StorageTier tier, boolean hasParent, long parentHash, long[] sequenceHashes) {
        PartitionIndex seq = bySequence;
        if (seq == null) {
            bySequence = seq = new PartitionIndex(blockSize);
            owners.forEachStoreWorker(w -> bySequence.markSharedStore(w, true));
        }
        return seq.store(workerId, dpRank, tier, hasParent, parentHash, sequenceHashes, sequenceHashes);
    }

    /** Removes one copy of each hash; returns how many hashes the owner did not hold in that tier. */
    public int remove(long workerId, int dpRank, StorageTier tier, long[] blockHashes) {
        PartitionIndex seq = bySequence;
        if (seq == null || seq.owners.find(workerId, dpRank) == null) {
            return removeHere(workerId, dpRank, tier, blockHashes);
        }
        if (owners.find(workerId, dpRank) == null) {
            return seq.removeHere(workerId, dpRank, tier, blockHashes);
        }
        // The owner holds blocks in both indexes: each hash is removed where the owner holds it.
        int missing = 0;
        long[] one = new long[1];
        for (long h : blockHashes) {
            one[0] = h;
            missing += copiesHere(workerId, dpRank, tier, h) > 0
                    ? removeHere(workerId, dpRank, tier, one)
                    : seq.removeHere(workerId, dpRank, tier, one);
        }
        return missing;
    }

    private int removeHere(long workerId, int dpRank, StorageTier tier, long[] blockHashes) {
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
        if (bySequence != null) {
            bySequence.clear(workerId, dpRank);
        }
    }

    public void removeWorker(long workerId) {
        for (Owner o : owners.ofWorker(workerId)) {
            clearOwner(o);
            owners.release(o);
        }
        if (bySequence != null) {
            bySequence.removeWorker(workerId);
        }
    }

    public void removeWorkerDpRank(long workerId, int dpRank) {
        Owner o = owners.find(workerId, dpRank);
        if (o != null) {
            clearOwner(o);
            owners.release(o);
        }
        if (bySequence != null) {
            bySequence.removeWorkerDpRank(workerId, dpRank);
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
        return matchOwners(localHashes, null).toList();
    }

    /** {@link #match(long[])} with the prompt's sequence hashes as in {@link #matchOwners}, as records. */
    public List<OwnerMatch> match(long[] localHashes, long[] sequenceHashes) {
        return matchOwners(localHashes, sequenceHashes).toList();
    }

    /**
     * {@link #match(long[])} as columns, the way the partition answers queries, for a prompt whose rolling sequence
     * hashes are known ({@code sequenceHashes}, possibly longer than {@code localHashes} when they came from
     * {@link #localHashesOfSequence}); null derives them from the local hashes when blocks stored without tokens
     * need them.
     */
    public OwnerMatches matchOwners(long[] localHashes, long[] sequenceHashes) {
        OwnerMatches here = matchers.get().match(LocalHashes.of(localHashes));
        PartitionIndex seq = bySequence;
        if (seq == null || seq.isEmpty()) {
            return here;
        }
        return OwnerMatches.merge(
                here, seq.matchers.get().match(LocalHashes.of(sequenceFor(localHashes, sequenceHashes))));
    }

    /**
     * {@link #matchOwners(long[], long[])} and {@link #sharedReach(long[], long[])} of a prompt whose hashes are
     * computed as the walk reaches them: when no block was stored without tokens and no shared store is registered,
     * only the held blocks and one more are hashed; otherwise every hash is, as those walks need.
     */
    public Reach matchLazily(LocalHashes localHashes) {
        PartitionIndex seq = bySequence;
        if ((seq == null || seq.isEmpty()) && !owners.anyStore()) {
            return new Reach(matchers.get().match(localHashes), NO_SHARED_REACH);
        }
        long[] all = localHashes.toArray();
        long[] sequence = sequenceHashesFor(all);
        return new Reach(matchOwners(all, sequence), sharedReach(all, sequence));
    }

    /** A prompt's matches and the shared stores' reach ({@link #sharedReach(long[], long[])}). */
    public record Reach(OwnerMatches matches, int[] sharedReach) {}

    /**
     * The walk of {@link #match(long[])} tier by tier, for Dynamo's {@code /query_tiered_by_hash} (docs/api/dynamo.md#post-query_tiered_by_hash). Only
     * blocks stored with their tokens take part: the Dynamo router asks by local hash.
     */
    public TieredMatch matchTiered(long[] localHashes) {
        return matchers.get().matchTiered(LocalHashes.of(localHashes));
    }

    /**
     * The engine hashes one owner holds along a prompt's local hashes from its first block, device then host pinned
     * (the reach {@link #matchTiered} counts in those tiers), at most {@code maxBlocks}; position i names block i.
     * Empty when it holds none. Like {@link #matchTiered}, only blocks stored with their tokens take part.
     */
    public long[] engineHashes(long workerId, int dpRank, long[] localHashes, int maxBlocks) {
        return chains.of(workerId, dpRank, localHashes, maxBlocks);
    }

    /**
     * The rolling sequence hashes of a prompt's local hashes when blocks stored without tokens need them for a
     * query, else null: compute them once and hand them to {@link #matchOwners} and
     * {@link #sharedReach(long[], long[])}.
     */
    public long[] sequenceHashesFor(long[] localHashes) {
        return bySequence == null || bySequence.isEmpty() ? null : BlockHasher.sequenceHashes(localHashes);
    }

    private static long[] sequenceFor(long[] localHashes, long[] sequenceHashes) {
        return sequenceHashes != null ? sequenceHashes : BlockHasher.sequenceHashes(localHashes);
    }

    /**
     * The local hashes of a prompt given as rolling sequence hashes (docs/protocol/hashing.md#rolling-sequence-hash),
     * as far as this partition holds its
     * prefix in any tier; matching them gives what a token query of the same prompt gives.
     */
    public long[] localHashesOfSequence(long[] sequenceHashes) {
        return SequencePath.localHashes(tree, lower, sequenceHashes);
    }

    /**
     * The local hashes of a prompt given as its engine's block hashes (SGLang's, as its events carry them), as far as
     * this partition holds its prefix in any tier; matching them gives what a token query of the same prompt gives.
     */
    public long[] localHashesOfEngineHashes(long[] engineHashes) {
        return EnginePath.localHashes(tree, lower, owners, engineHashes);
    }

    /**
     * Marks a worker as a Mooncake Store (docs/protocol/events.md#mooncake-store-events), or ordinary again: a shared
     * store owner's CPU and disk blocks
     * extend every owner's lower-tier walk, and its device-tier blocks are refused.
     */
    public void markSharedStore(long workerId, boolean store) {
        owners.markStore(workerId, store);
        if (bySequence != null) {
            bySequence.markSharedStore(workerId, store);
        }
    }

    /**
     * What the shared store owners alone hold of a prompt from its first block: the cumulative cpu and disk reach, in
     * blocks, of an owner with nothing of its own, as {@code {cpu, disk}}; {@code {0, 0}} without shared owners. The
     * array is the caller's to read, not to change.
     */
    public int[] sharedReach(long[] localHashes) {
        return sharedReach(localHashes, null);
    }

    /** {@link #sharedReach(long[])} with the prompt's sequence hashes as in {@link #matchOwners}. */
    public int[] sharedReach(long[] localHashes, long[] sequenceHashes) {
        int[] here = owners.anyStore() ? matchers.get().sharedReach(LocalHashes.of(localHashes)) : NO_SHARED_REACH;
        PartitionIndex seq = bySequence;
        if (seq == null || !seq.owners.anyStore()) {
            return here;
        }
        int[] there = seq.matchers.get().sharedReach(LocalHashes.of(sequenceFor(localHashes, sequenceHashes)));
        return new int[] {Math.max(here[0], there[0]), Math.max(here[1], there[1])};
    }

    /**
     * Every held block as a single-block stored event, device tier breadth-first (parents before children,
     * each owner's own engine hashes), then the lower tiers. A device block is emitted for an owner only
     * when the owner also holds every ancestor: anything else could neither be replayed nor matched. A block held
     * more than once is followed by {@link BlockVisitor#copies}.
     */
    public void dump(BlockVisitor sink) {
        dump(sink, false);
    }

    /**
     * As {@link #dump(BlockVisitor)}; {@code depthFirst} reports the device tree a branch at a time, so down a chain
     * each block's parent is the block reported just before it.
     */
    public void dump(BlockVisitor sink, boolean depthFirst) {
        new DumpWalk(this, sink).run(depthFirst);
    }

    private LowerTierIndex lowerTier(StorageTier tier) {
        int slot = LowerTiers.slot(tier);
        LowerTierIndex t = lower[slot];
        if (t == null) {
            lower[slot] = t = new LowerTierIndex(tier, owners);
        }
        return t;
    }

    // ---- memory ----

    /**
     * Heap the index holds for what it indexes: node records and tables of live blocks, holder sets, owners and their
     * maps, lower-tier edges. Structures keep their capacity when blocks go (freed node records are reused first), so
     * the heap in use stays at the highest figure this reached.
     */
    public long memoryBytes() {
        return tree.bytes() + owners.bytes() + lowerTierBytes() + (bySequence == null ? 0 : bySequence.memoryBytes());
    }

    /** {@link #memoryBytes()} with every owner counted afresh: the check of the owners' running sum. */
    long memoryBytesRecounted() {
        return tree.bytes()
                + owners.bytesRecounted()
                + lowerTierBytes()
                + (bySequence == null ? 0 : bySequence.memoryBytes());
    }

    /**
     * Evicts until {@link #memoryBytes()} is at most {@code targetBytes} or nothing is left to evict: least recently
     * used device leaf chains (stored or reached by a query least recently), and the oldest lower-tier edges with no
     * edge below them; whichever of the two holds more gives first. An evicted block is forgotten by every holder: a
     * query misses it, a later remove of it is a no-op counted as missing. Returns the blocks evicted.
     */
    public long evictTo(long targetBytes) {
        long evicted = 0;
        long excess = memoryBytes() - targetBytes;
        while (excess > 0) {
            // Each block evicted frees at least a node record, so this many overshoot by at most a chain or a batch.
            long batch = excess / NODE_BYTES_FREED + 1;
            boolean lowerFirst = lowerTierBytes() > tree.bytes();
            long done = 0;
            while (done < batch) {
                int n = lowerFirst ? evictLowerTiers(batch - done) : 0;
                if (n == 0) {
                    n = tree.evictLeafChain(owners);
                }
                if (n == 0 && !lowerFirst) {
                    n = evictLowerTiers(batch - done);
                }
                if (n == 0 && bySequence != null) {
                    n = (int) bySequence.evictTo(bySequence.memoryBytes() - 1);
                }
                if (n == 0) {
                    return evicted + done;
                }
                done += n;
            }
            evicted += done;
            excess = memoryBytes() - targetBytes;
        }
        return evicted;
    }

    private int evictLowerTiers(long max) {
        int n = 0;
        for (LowerTierIndex t : lower) {
            if (t != null && n < max) {
                n += t.evictOldest((int) Math.min(max - n, Integer.MAX_VALUE));
            }
        }
        return n;
    }

    private long lowerTierBytes() {
        long b = 0;
        for (LowerTierIndex t : lower) {
            b += t == null ? 0 : t.bytes();
        }
        return b;
    }

    /** Blocks evicted over the index's life, for the budget or to make room in a full tree. */
    public long evictedBlocks() {
        long n = tree.evicted();
        for (LowerTierIndex t : lower) {
            n += t == null ? 0 : t.evicted();
        }
        return n + (bySequence == null ? 0 : bySequence.evictedBlocks());
    }

    // ---- size figures and inspection ----

    /** Device blocks (tree nodes) held by at least one owner, reachable or detached. */
    public long blockCount() {
        return tree.nodeCount() + (bySequence == null ? 0 : bySequence.blockCount());
    }

    /** Device (owner, block) holder pairs. */
    public long holderEntryCount() {
        return tree.entryCount() + (bySequence == null ? 0 : bySequence.holderEntryCount());
    }

    /** Edges of one lower tier (0 for the device tier or an unused tier). */
    public int lowerTierEdgeCount(StorageTier tier) {
        if (tier == StorageTier.DEVICE) {
            return 0;
        }
        LowerTierIndex t = lower[LowerTiers.slot(tier)];
        return (t == null ? 0 : t.edgeCount()) + (bySequence == null ? 0 : bySequence.lowerTierEdgeCount(tier));
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
        return bySequence == null || bySequence.isEmpty();
    }

    /** Distinct engine hashes an owner holds in a tier (the size of its lookup map). */
    public int heldBlocks(long workerId, int dpRank, StorageTier tier) {
        Owner o = owners.find(workerId, dpRank);
        return (o == null ? 0 : o.held(tier))
                + (bySequence == null ? 0 : bySequence.heldBlocks(workerId, dpRank, tier));
    }

    /** (block, holder) pairs of a tier over all owners: what the {@code kvindexer_blocks} gauge shows. */
    public long heldBlocks(StorageTier tier) {
        return owners.held(tier) + (bySequence == null ? 0 : bySequence.heldBlocks(tier));
    }

    /** Copies of one engine hash an owner holds in a tier (its reference count). */
    public int copies(long workerId, int dpRank, StorageTier tier, long blockHash) {
        return copiesHere(workerId, dpRank, tier, blockHash)
                + (bySequence == null ? 0 : bySequence.copiesHere(workerId, dpRank, tier, blockHash));
    }

    private int copiesHere(long workerId, int dpRank, StorageTier tier, long blockHash) {
        Owner o = owners.find(workerId, dpRank);
        if (o == null) {
            return 0;
        }
        if (tier == StorageTier.DEVICE) {
            return tree.copies(o, blockHash);
        }
        LowerTierBlocks<LowerEdge> h = o.lowerIfAny(LowerTiers.slot(tier));
        return h == null ? 0 : h.copies(blockHash);
    }

    /** Holders of the device node at a path of local hashes from the root; empty when there is none. */
    public List<WorkerRank> holdersAt(long... localPath) {
        int node = nodeAt(localPath);
        return node == DeviceTree.NONE ? List.of() : keys(node);
    }

    /** Children of the device node at a path of local hashes (the empty path is the root); -1 if absent. */
    public int childCountAt(long... localPath) {
        int node = nodeAt(localPath);
        return node == DeviceTree.NONE ? -1 : tree.nodes.childCount(node);
    }

    /** Holders of the device node that an owner maps an engine hash to (attached or detached). */
    public List<WorkerRank> holdersOfBlock(long workerId, int dpRank, long blockHash) {
        Owner o = owners.find(workerId, dpRank);
        int node = o == null ? DeviceTree.NONE : tree.find(o, blockHash);
        return node == DeviceTree.NONE ? List.of() : keys(node);
    }

    private int nodeAt(long[] localPath) {
        int node = DeviceNodes.ROOT;
        for (int i = 0; i < localPath.length && node != DeviceTree.NONE; i++) {
            node = tree.nodes.child(node, localPath[i]);
        }
        return node;
    }

    private List<WorkerRank> keys(int node) {
        List<WorkerRank> out = new ArrayList<>();
        for (int id : tree.nodes.holders.ids(node)) {
            Owner o = owners.byId(id);
            out.add(new WorkerRank(o.workerId, o.dpRank));
        }
        return out;
    }
}
