package dev.kvindexer.load;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.util.Arrays;

/**
 * Which holders (ranks) hold each active sequence hash: one list per hash, its nodes in pooled arrays, since most
 * hashes have a single holder. Lets a selection find how deep a prompt is active on every rank at once, walking each
 * block's holders, instead of looking the prompt up in every rank's own set. A holder is listed once per hash; the
 * caller adds it when the hash becomes active there and removes it when it stops being.
 */
final class HashHolders<H> {
    private static final int NONE = -1;

    private final Long2IntOpenHashMap first = new Long2IntOpenHashMap();
    private Object[] holder = new Object[64];
    private int[] next = new int[64];
    private int freeNodes = NONE;
    private int used;

    HashHolders() {
        first.defaultReturnValue(NONE);
    }

    void add(long hash, H h) {
        int node = allocate();
        holder[node] = h;
        next[node] = first.put(hash, node);
    }

    /** Takes {@code h} off {@code hash}'s list; nothing when it is not on it. */
    void remove(long hash, H h) {
        int previous = NONE;
        int node = first.get(hash);
        while (node != NONE && holder[node] != h) {
            previous = node;
            node = next[node];
        }
        if (node == NONE) {
            return;
        }
        if (previous != NONE) {
            next[previous] = next[node];
        } else if (next[node] == NONE) {
            first.remove(hash);
        } else {
            first.put(hash, next[node]);
        }
        holder[node] = null;
        next[node] = freeNodes;
        freeNodes = node;
    }

    /** The first node of {@code hash}'s list, or a negative number when nobody holds it. */
    int first(long hash) {
        return first.get(hash);
    }

    /** The node after {@code node}, or a negative number at the list's end. */
    int next(int node) {
        return next[node];
    }

    @SuppressWarnings("unchecked")
    H holder(int node) {
        return (H) holder[node];
    }

    /** How many distinct hashes are held. */
    int hashes() {
        return first.size();
    }

    private int allocate() {
        if (freeNodes != NONE) {
            int node = freeNodes;
            freeNodes = next[node];
            return node;
        }
        if (used == holder.length) {
            holder = Arrays.copyOf(holder, used * 2);
            next = Arrays.copyOf(next, used * 2);
        }
        return used++;
    }
}
