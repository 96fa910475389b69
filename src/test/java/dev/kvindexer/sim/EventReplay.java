package dev.kvindexer.sim;

import dev.kvindexer.hash.BlockHasher;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Test oracle for the oracle: rebuilds held blocks from emitted events alone, the way an indexer would. */
final class EventReplay {
    private final long worker;
    private final int dpRank;
    /** (tier, engine hash) → block. */
    private final Map<String, HeldBlock> held = new HashMap<>();

    EventReplay(long worker, int dpRank) {
        this.worker = worker;
        this.dpRank = dpRank;
    }

    static String tierOf(String medium) {
        return medium == null || medium.equals("GPU") ? HeldBlock.DEVICE : HeldBlock.HOST_PINNED;
    }

    void apply(List<EngineEvent> events) {
        for (EngineEvent e : events) {
            apply(e);
        }
    }

    void apply(EngineEvent e) {
        if (e instanceof EngineEvent.Store s) {
            String tier = tierOf(s.medium());
            Long parent = s.parent();
            for (int i = 0; i < s.blockHashes().length; i++) {
                long h = s.blockHashes()[i];
                long tokensHash =
                        BlockHasher.hashTokens(s.tokenIds(), i * s.blockSize(), s.blockSize(), BlockHasher.BASE_SEED);
                HeldBlock prev = held.put(key(tier, h), new HeldBlock(worker, dpRank, tier, h, parent, tokensHash));
                if (prev != null) {
                    throw new AssertionError("stored twice: " + prev);
                }
                parent = h;
            }
        } else if (e instanceof EngineEvent.Remove r) {
            for (long h : r.blockHashes()) {
                if (held.remove(key(tierOf(r.medium()), h)) == null) {
                    throw new AssertionError("removed a block not held: " + Long.toUnsignedString(h));
                }
            }
        } else {
            held.clear();
        }
    }

    /** Every device block's parent is itself held on the device (parents never leave before children). */
    void assertDeviceTreeClosed() {
        for (HeldBlock b : held.values()) {
            if (b.tier().equals(HeldBlock.DEVICE)
                    && b.parentHash() != null
                    && !held.containsKey(key(HeldBlock.DEVICE, b.parentHash()))) {
                throw new AssertionError("device block without its parent: " + b);
            }
        }
    }

    Set<HeldBlock> held() {
        return new HashSet<>(held.values());
    }

    private static String key(String tier, long hash) {
        return tier + ":" + hash;
    }
}
