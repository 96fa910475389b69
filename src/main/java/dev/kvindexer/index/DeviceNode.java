package dev.kvindexer.index;

import it.unimi.dsi.fastutil.ints.Int2LongOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.util.function.Consumer;

/**
 * One prefix position of the device tree (SPEC §6.1). Most nodes have a single child, so it is kept
 * inline and a map is allocated only on the second child.
 */
final class DeviceNode extends OwnerBits {
    final long localHash;
    /** The first writer's engine hash; owners with another engine hash for this block are in altHashes. */
    final long blockHash;
    /** Null for the root and for detached nodes. */
    DeviceNode parent;

    private DeviceNode onlyChild;
    private Long2ObjectOpenHashMap<DeviceNode> children;
    private Int2LongOpenHashMap altHashes;

    DeviceNode(DeviceNode parent, long localHash, long blockHash) {
        this.parent = parent;
        this.localHash = localHash;
        this.blockHash = blockHash;
    }

    DeviceNode child(long local) {
        DeviceNode only = onlyChild;
        if (only != null) {
            return only.localHash == local ? only : null;
        }
        Long2ObjectOpenHashMap<DeviceNode> map = children;
        return map == null ? null : map.get(local);
    }

    void putChild(DeviceNode child) {
        if (children != null) {
            children.put(child.localHash, child);
        } else if (onlyChild == null) {
            onlyChild = child;
        } else {
            children = new Long2ObjectOpenHashMap<>(4);
            children.put(onlyChild.localHash, onlyChild);
            children.put(child.localHash, child);
            onlyChild = null;
        }
    }

    /** Unlinks {@code child} if it is still the child at its local hash. */
    void removeChild(DeviceNode child) {
        if (onlyChild == child) {
            onlyChild = null;
        } else if (children != null && children.get(child.localHash) == child) {
            children.remove(child.localHash);
            if (children.isEmpty()) {
                children = null;
            }
        }
    }

    /** Detaches every child (SPEC §6.3: the subtree of an emptied node becomes unreachable). */
    void dropChildren() {
        if (onlyChild != null) {
            onlyChild.parent = null;
            onlyChild = null;
        } else if (children != null) {
            for (DeviceNode c : children.values()) {
                c.parent = null;
            }
            children = null;
        }
    }

    int childCount() {
        return onlyChild != null ? 1 : children == null ? 0 : children.size();
    }

    void forEachChild(Consumer<DeviceNode> action) {
        if (onlyChild != null) {
            action.accept(onlyChild);
        } else if (children != null) {
            children.values().forEach(action);
        }
    }

    long hashOf(int owner) {
        Int2LongOpenHashMap alt = altHashes;
        if (alt != null && alt.containsKey(owner)) {
            return alt.get(owner);
        }
        return blockHash;
    }

    void setHashOf(int owner, long hash) {
        if (hash == blockHash) {
            forgetHashOf(owner);
            return;
        }
        if (altHashes == null) {
            altHashes = new Int2LongOpenHashMap(2);
        }
        altHashes.put(owner, hash);
    }

    void forgetHashOf(int owner) {
        if (altHashes != null) {
            altHashes.remove(owner);
            if (altHashes.isEmpty()) {
                altHashes = null;
            }
        }
    }
}
