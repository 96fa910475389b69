package dev.kvindexer.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;

/**
 * One engine rank's KV cache: a device (GPU) LRU of {@code capacity} blocks that only ever evicts leaves, and an
 * optional host (CPU) tier that receives the blocks the device evicts. Turns each request into the events the engine
 * publishes, and is the truth the indexer must converge to. No ZMQ, no threads; methods are synchronized so a test
 * may read {@link #held()} from another thread.
 *
 * <p>Events of one request, in this order (each list only when non-empty):
 * <ol>
 *   <li>{@code BlockRemoved(host)} — host blocks dropped to make room for this request's offloads;</li>
 *   <li>{@code BlockStored(host)} — one single-block event per device victim newly copied to the host tier
 *       (each names its own parent, which is why they are not merged);</li>
 *   <li>{@code BlockRemoved(device)} — the device victims, children before parents;</li>
 *   <li>{@code BlockStored(device)} — the request's missing blocks as one chain under the last cached prefix block.</li>
 * </ol>
 * Removals precede the store so the device never holds more than {@code capacity} blocks at any point, and a victim
 * is never the new chain's parent (the matched prefix is pinned), so the order is safe for any indexer.
 */
public final class KvCacheModel {
    private final long worker;
    private final int dpRank;
    private final int blockSize;
    private final int capacity;
    private final int hostCapacity;
    private final String deviceMedium;
    private final String hostMedium;

    /** Access-ordered: iteration starts at the least recently used block. {@code get} touches, {@code containsKey} does not. */
    private final LinkedHashMap<Long, Block> device = new LinkedHashMap<>(16, 0.75f, true);

    private final LinkedHashMap<Long, Block> host = new LinkedHashMap<>(16, 0.75f, true);

    /**
     * @param hostCapacity host-tier blocks; 0 disables the tier, otherwise it must be ≥ {@code capacity} so one
     *                     request's offloads always fit
     */
    public KvCacheModel(
            long worker,
            int dpRank,
            int blockSize,
            int capacity,
            int hostCapacity,
            String deviceMedium,
            String hostMedium) {
        if (blockSize <= 0 || capacity <= 0) {
            throw new IllegalArgumentException("block size and capacity must be positive");
        }
        if (hostCapacity != 0 && hostCapacity < capacity) {
            throw new IllegalArgumentException(
                    "host capacity " + hostCapacity + " must be 0 or >= device capacity " + capacity);
        }
        this.worker = worker;
        this.dpRank = dpRank;
        this.blockSize = blockSize;
        this.capacity = capacity;
        this.hostCapacity = hostCapacity;
        this.deviceMedium = deviceMedium;
        this.hostMedium = hostMedium;
    }

    /**
     * Serves one request: reuses its longest cached prefix, evicts, offloads, stores the rest. A chain longer than the
     * cache keeps only its first {@code capacity} blocks (a real engine would reject or chunk such a request).
     */
    public synchronized List<EngineEvent> admit(BlockChain chain) {
        if (chain.blockSize() != blockSize) {
            throw new IllegalArgumentException("chain block size " + chain.blockSize() + " != " + blockSize);
        }
        long[] hashes = chain.engineHashes();
        int n = Math.min(chain.size(), capacity);
        int matched = 0;
        while (matched < n && device.containsKey(hashes[matched])) {
            matched++;
        }
        Set<Long> pinned = new HashSet<>();
        for (int i = 0; i < matched; i++) {
            pinned.add(hashes[i]);
        }
        List<Block> victims = evictDeviceLeaves(device.size() + (n - matched) - capacity, pinned);

        List<EngineEvent> events = new ArrayList<>(4);
        if (hostCapacity > 0 && !victims.isEmpty()) {
            offload(victims, events);
        }
        if (!victims.isEmpty()) {
            events.add(new EngineEvent.Remove(hashesOf(victims), deviceMedium));
        }
        if (matched < n) {
            events.add(storeMissing(chain, matched, n));
        }
        // Touch tail-first so the root ends most recent and the tail is evicted first (as vLLM frees blocks); this also
        // keeps leaves at the LRU end, so the leaf scan in evictDeviceLeaves rarely skips anything.
        for (int i = n - 1; i >= 0; i--) {
            device.get(hashes[i]);
        }
        return events;
    }

    /** Everything held now, in every tier. */
    public synchronized Set<HeldBlock> held() {
        Set<HeldBlock> out = new HashSet<>();
        for (Block b : device.values()) {
            out.add(new HeldBlock(worker, dpRank, HeldBlock.DEVICE, b.hash, b.parentHash, b.tokensHash));
        }
        for (Block b : host.values()) {
            out.add(new HeldBlock(worker, dpRank, HeldBlock.HOST_PINNED, b.hash, b.parentHash, b.tokensHash));
        }
        return out;
    }

    public synchronized int deviceBlocks() {
        return device.size();
    }

    public synchronized int hostBlocks() {
        return host.size();
    }

    /** Forgets everything, as a restarted engine process does (it publishes nothing about it). */
    public synchronized void clear() {
        device.clear();
        host.clear();
    }

    private List<Block> evictDeviceLeaves(int count, Set<Long> pinned) {
        List<Block> victims = new ArrayList<>(Math.max(count, 0));
        while (victims.size() < count) {
            Block victim = null;
            for (Block b : device.values()) {
                if (b.cachedChildren == 0 && !pinned.contains(b.hash)) {
                    victim = b;
                    break;
                }
            }
            if (victim == null) {
                // Unreachable while n <= capacity: unpinned blocks never parent pinned ones, so they peel off as
                // leaves.
                throw new IllegalStateException("no evictable leaf among " + device.size() + " blocks");
            }
            device.remove(victim.hash);
            if (victim.parent != null) {
                victim.parent.cachedChildren--;
            }
            victims.add(victim);
        }
        return victims;
    }

    private void offload(List<Block> victims, List<EngineEvent> events) {
        Set<Long> fresh = new HashSet<>();
        List<Block> copies = new ArrayList<>();
        for (Block v : victims) {
            fresh.add(v.hash);
            if (host.get(v.hash) == null) {
                Block copy = new Block(v.hash, v.parentHash, null, v.tokensHash, v.tokens);
                host.put(v.hash, copy);
                copies.add(copy);
            }
        }
        List<Long> dropped = new ArrayList<>();
        Iterator<Block> lru = host.values().iterator();
        while (host.size() > hostCapacity && lru.hasNext()) {
            Block b = lru.next();
            if (!fresh.contains(b.hash)) {
                lru.remove();
                dropped.add(b.hash);
            }
        }
        if (!dropped.isEmpty()) {
            events.add(new EngineEvent.Remove(
                    dropped.stream().mapToLong(Long::longValue).toArray(), hostMedium));
        }
        for (Block c : copies) {
            events.add(new EngineEvent.Store(new long[] {c.hash}, c.parentHash, c.tokens, blockSize, hostMedium, null));
        }
    }

    private EngineEvent.Store storeMissing(BlockChain chain, int from, int to) {
        long[] hashes = chain.engineHashes();
        Long parentHash = from == 0 ? null : hashes[from - 1];
        Block parent = from == 0 ? null : device.get(hashes[from - 1]);
        for (int i = from; i < to; i++) {
            int[] tokens = Arrays.copyOfRange(chain.tokens(), i * blockSize, (i + 1) * blockSize);
            Block b = new Block(hashes[i], i == 0 ? null : hashes[i - 1], parent, chain.localHashes()[i], tokens);
            if (parent != null) {
                parent.cachedChildren++;
            }
            device.put(b.hash, b);
            parent = b;
        }
        int[] tokens = Arrays.copyOfRange(chain.tokens(), from * blockSize, to * blockSize);
        return new EngineEvent.Store(
                Arrays.copyOfRange(hashes, from, to), parentHash, tokens, blockSize, deviceMedium, null);
    }

    private static long[] hashesOf(List<Block> blocks) {
        long[] out = new long[blocks.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = blocks.get(i).hash;
        }
        return out;
    }

    /** A cached block; {@code parent} links device blocks so eviction can keep child counts without touching the LRU. */
    private static final class Block {
        final long hash;
        final Long parentHash;
        final Block parent;
        final long tokensHash;
        final int[] tokens;
        int cachedChildren;

        Block(long hash, Long parentHash, Block parent, long tokensHash, int[] tokens) {
            this.hash = hash;
            this.parentHash = parentHash;
            this.parent = parent;
            this.tokensHash = tokensHash;
            this.tokens = tokens;
        }
    }
}
