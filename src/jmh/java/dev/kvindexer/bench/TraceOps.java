package dev.kvindexer.bench;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.OwnerMatches;
import dev.kvindexer.index.PartitionIndex;
import dev.kvindexer.sim.BlockChain;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.sim.KvCacheModel;
import dev.kvindexer.sim.TracePrompts.TraceRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The index operations of a Mooncake trace served by simulated engines, recorded once so that timed passes replay
 * exactly the same calls with nothing else in the loop.
 *
 * <p>Each trace line is one request; each hash_id one block. A block's local hash is a hash of its id (trace ids
 * already name a whole prefix) and its engine hash the rolling sequence hash of the locals, as Dynamo's mocker
 * engines publish. Before a request is served the router queries the index once. A request whose longest cached
 * prefix is two blocks or more goes to the engine holding it (a conversation's next turn returns to its engine; ties
 * go to the one chosen least recently); any other request goes to the engine chosen least recently (round-robin).
 * One block is not enough: most requests share the trace's first block, and following it alone would send every
 * request to one engine. The engine is a {@link KvCacheModel}: a device LRU of {@code capacity} blocks that evicts
 * leaves, publishing removes before the store of the request's missing blocks.
 */
final class TraceOps {
    static final byte STORE = 0;
    static final byte REMOVE = 1;
    static final byte QUERY = 2;

    final int engines;
    final int capacity;
    final int requests;
    byte[] kind = new byte[1 << 16];
    int[] worker = new int[1 << 16];
    boolean[] hasParent = new boolean[1 << 16];
    long[] parent = new long[1 << 16];
    /** Engine hashes of a store or remove, local hashes of a query. */
    long[][] hashes = new long[1 << 16][];
    /** Local hashes of a store. */
    long[][] locals = new long[1 << 16][];

    int size;
    long storedBlocks;
    long removedBlocks;
    long queriedBlocks;
    /** Device blocks the engines hold at the end: what the index must hold after a replay. */
    long heldAtEnd;

    private TraceOps(int engines, int capacity, int requests) {
        this.engines = engines;
        this.capacity = capacity;
        this.requests = requests;
    }

    long operations() {
        return storedBlocks + removedBlocks + queriedBlocks;
    }

    static TraceOps record(Path trace, int engines, int capacity, int blockSize) throws IOException {
        List<String> lines = Files.readAllLines(trace);
        TraceOps ops = new TraceOps(engines, capacity, lines.size());
        KvCacheModel[] models = new KvCacheModel[engines];
        for (int e = 0; e < engines; e++) {
            // Block size 1 with placeholder tokens: the model only needs the hashes, and the index is told 512.
            models[e] = new KvCacheModel(e, 0, 1, capacity, 0, "GPU", "CPU");
        }
        PartitionIndex router = new PartitionIndex(blockSize);
        long[] lastChosen = new long[engines];
        Arrays.fill(lastChosen, -1);
        java.util.HashMap<Long, Long> localOf = new java.util.HashMap<>();
        long n = 0;
        for (String line : lines) {
            long[] ids = TraceRequest.parse(line).hashIds();
            if (ids.length == 0) {
                continue;
            }
            long[] local = new long[ids.length];
            for (int i = 0; i < ids.length; i++) {
                local[i] = BlockHasher.hashTokens(
                        new int[] {(int) ids[i], (int) (ids[i] >>> 32)}, 0, 2, BlockHasher.BASE_SEED);
            }
            long[] engine = BlockHasher.sequenceHashes(local);
            for (int i = 0; i < ids.length; i++) {
                localOf.put(engine[i], local[i]);
            }
            ops.add(QUERY, 0, false, 0, local, null);
            ops.queriedBlocks += local.length;
            int chosen = route(router.match(local), lastChosen);
            lastChosen[chosen] = n++;
            for (EngineEvent ev : models[chosen].admit(new BlockChain(1, new int[ids.length], local, engine))) {
                if (ev instanceof EngineEvent.Store s) {
                    long[] storedLocals = new long[s.blockHashes().length];
                    for (int i = 0; i < storedLocals.length; i++) {
                        storedLocals[i] = localOf.get(s.blockHashes()[i]);
                    }
                    boolean hasParent = s.parent() != null;
                    long parentHash = hasParent ? s.parent() : 0;
                    ops.add(STORE, chosen, hasParent, parentHash, s.blockHashes(), storedLocals);
                    ops.storedBlocks += storedLocals.length;
                    router.store(chosen, 0, StorageTier.DEVICE, hasParent, parentHash, s.blockHashes(), storedLocals);
                } else if (ev instanceof EngineEvent.Remove r) {
                    ops.add(REMOVE, chosen, false, 0, r.blockHashes(), null);
                    ops.removedBlocks += r.blockHashes().length;
                    router.remove(chosen, 0, StorageTier.DEVICE, r.blockHashes());
                }
            }
        }
        for (KvCacheModel m : models) {
            ops.heldAtEnd += m.deviceBlocks();
        }
        return ops;
    }

    private static int route(List<OwnerMatch> matches, long[] lastChosen) {
        int[] held = new int[lastChosen.length];
        int best = 0;
        for (OwnerMatch m : matches) {
            held[(int) m.workerId()] = m.gpuBlocks();
            best = Math.max(best, m.gpuBlocks());
        }
        if (best < 2) {
            best = -1; // every engine ties
        }
        int chosen = -1;
        for (int e = 0; e < held.length; e++) {
            if ((best < 0 || held[e] == best) && (chosen < 0 || lastChosen[e] < lastChosen[chosen])) {
                chosen = e;
            }
        }
        return chosen;
    }

    private void add(byte k, int w, boolean hp, long p, long[] h, long[] l) {
        if (size == kind.length) {
            int n = size * 2;
            kind = Arrays.copyOf(kind, n);
            worker = Arrays.copyOf(worker, n);
            hasParent = Arrays.copyOf(hasParent, n);
            parent = Arrays.copyOf(parent, n);
            hashes = Arrays.copyOf(hashes, n);
            locals = Arrays.copyOf(locals, n);
        }
        kind[size] = k;
        worker[size] = w;
        hasParent[size] = hp;
        parent[size] = p;
        hashes[size] = h;
        locals[size] = l;
        size++;
    }

    /** Replays every operation on {@code index}; returns a value derived from the answers, so none is dead code. */
    long replayOn(PartitionIndex index) {
        long sink = 0;
        for (int i = 0; i < size; i++) {
            switch (kind[i]) {
                case STORE ->
                    index.store(worker[i], 0, StorageTier.DEVICE, hasParent[i], parent[i], hashes[i], locals[i]);
                case REMOVE -> sink += index.remove(worker[i], 0, StorageTier.DEVICE, hashes[i]);
                default -> {
                    OwnerMatches m = index.matchOwners(hashes[i], null);
                    sink += m.isEmpty() ? 0 : m.get(0).gpuBlocks();
                }
            }
        }
        return sink;
    }

    /**
     * The physical-limit reference: the same operations as single probes of one primitive long-keyed open-addressing
     * map (fastutil): a stored block is a put, a removed block a remove, a queried block a get.
     */
    long replayOnRawMap(it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap map) {
        long sink = 0;
        for (int i = 0; i < size; i++) {
            long[] h = hashes[i];
            switch (kind[i]) {
                case STORE -> {
                    for (long x : h) {
                        map.put(x, worker[i]);
                    }
                }
                case REMOVE -> {
                    for (long x : h) {
                        sink += map.remove(x);
                    }
                }
                default -> {
                    for (long x : h) {
                        sink += map.get(x);
                    }
                }
            }
        }
        return sink;
    }

    static List<String> describe(TraceOps ops) {
        List<String> out = new ArrayList<>();
        out.add(String.format(
                "requests %,d; engines %d x %,d device blocks; operations %,d calls",
                ops.requests, ops.engines, ops.capacity, ops.size));
        out.add(String.format(
                "block operations per pass %,d = stored %,d + removed %,d + queried %,d",
                ops.operations(), ops.storedBlocks, ops.removedBlocks, ops.queriedBlocks));
        return out;
    }
}
