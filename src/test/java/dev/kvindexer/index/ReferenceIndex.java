package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.event.WorkerRank;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A deliberately naive model of PartitionIndex's semantics (docs/protocol/index.md plus the project's choices:
 * reference
 * counts, per-rank clear, position-identified nodes), written for clarity, not speed.
 */
final class ReferenceIndex {
    static final class Node {
        final long local;
        Node parent;
        final Map<Long, Node> children = new HashMap<>();
        final Map<WorkerRank, Long> holders = new HashMap<>(); // owner → its engine hash here

        Node(Node parent, long local) {
            this.parent = parent;
            this.local = local;
        }
    }

    record EdgeKey(Long parent, long local) {}

    static final class Edge {
        final long child;
        final Set<WorkerRank> owners = new HashSet<>();

        Edge(long child) {
            this.child = child;
        }
    }

    static final class Tier {
        final Map<EdgeKey, Edge> edges = new HashMap<>();
        final Map<WorkerRank, Map<Long, EdgeKey>> reverse = new HashMap<>();
        final Map<WorkerRank, Map<Long, Integer>> copies = new HashMap<>();
    }

    private final Node root = new Node(null, 0);
    private final Map<WorkerRank, Map<Long, Node>> lookup = new LinkedHashMap<>();
    private final Map<WorkerRank, Map<Long, Integer>> copies = new HashMap<>();
    private final Map<StorageTier, Tier> tiers = new HashMap<>();

    StoreOutcome store(WorkerRank o, StorageTier tier, Long parentHash, long[] hashes, long[] locals) {
        if (tier != StorageTier.DEVICE) {
            storeLower(tiers.computeIfAbsent(tier, t -> new Tier()), o, parentHash, hashes, locals);
            return StoreOutcome.OK;
        }
        Node parent = root;
        if (parentHash != null) {
            parent = lookup.getOrDefault(o, Map.of()).get(parentHash);
            if (parent == null) {
                return StoreOutcome.PARENT_BLOCK_NOT_FOUND;
            }
        }
        Set<Long> seen = new HashSet<>();
        for (long h : hashes) {
            if ((parentHash != null && h == parentHash) || !seen.add(h)) {
                return StoreOutcome.INVALID_BLOCK_SEQUENCE;
            }
        }
        Map<Long, Node> mine = lookup.computeIfAbsent(o, k -> new HashMap<>());
        Map<Long, Integer> myCopies = copies.computeIfAbsent(o, k -> new HashMap<>());
        for (int i = 0; i < hashes.length; i++) {
            long h = hashes[i];
            Node node = parent.children.get(locals[i]);
            if (node == null) {
                node = new Node(parent, locals[i]);
                parent.children.put(locals[i], node);
            }
            Node before = mine.get(h);
            if (before == node) {
                myCopies.merge(h, 1, Integer::sum);
            } else {
                if (before != null) {
                    leave(o, before);
                }
                if (node.holders.containsKey(o)) {
                    long old = node.holders.get(o);
                    mine.remove(old);
                    myCopies.remove(old);
                }
                node.holders.put(o, h);
                mine.put(h, node);
                myCopies.put(h, 1);
            }
            parent = node;
        }
        return StoreOutcome.OK;
    }

    private void storeLower(Tier t, WorkerRank o, Long parentHash, long[] hashes, long[] locals) {
        Long prev = parentHash;
        Map<Long, EdgeKey> rev = t.reverse.computeIfAbsent(o, k -> new HashMap<>());
        Map<Long, Integer> cp = t.copies.computeIfAbsent(o, k -> new HashMap<>());
        for (int i = 0; i < hashes.length; i++) {
            long h = hashes[i];
            EdgeKey key = new EdgeKey(prev, locals[i]);
            Edge e = t.edges.get(key);
            if (e != null && e.child != h) {
                return;
            }
            if (e == null) {
                e = new Edge(h);
                t.edges.put(key, e);
            }
            EdgeKey before = rev.get(h);
            if (key.equals(before)) {
                cp.merge(h, 1, Integer::sum);
            } else {
                if (before != null) {
                    releaseEdge(t, o, before);
                }
                rev.put(h, key);
                cp.put(h, 1);
                e.owners.add(o);
            }
            prev = h;
        }
    }

    int remove(WorkerRank o, StorageTier tier, long[] hashes) {
        int missing = 0;
        if (tier == StorageTier.DEVICE) {
            Map<Long, Node> mine = lookup.getOrDefault(o, new HashMap<>());
            Map<Long, Integer> cp = copies.getOrDefault(o, new HashMap<>());
            for (long h : hashes) {
                Node node = mine.get(h);
                if (node == null) {
                    missing++;
                    continue;
                }
                int left = cp.get(h) - 1;
                if (left > 0) {
                    cp.put(h, left);
                } else {
                    cp.remove(h);
                    mine.remove(h);
                    leave(o, node);
                }
            }
            return missing;
        }
        Tier t = tiers.get(tier);
        if (t == null) {
            return hashes.length;
        }
        Map<Long, EdgeKey> rev = t.reverse.getOrDefault(o, new HashMap<>());
        Map<Long, Integer> cp = t.copies.getOrDefault(o, new HashMap<>());
        for (long h : hashes) {
            EdgeKey key = rev.get(h);
            if (key == null) {
                missing++;
                continue;
            }
            int left = cp.get(h) - 1;
            if (left > 0) {
                cp.put(h, left);
            } else {
                cp.remove(h);
                rev.remove(h);
                releaseEdge(t, o, key);
            }
        }
        return missing;
    }

    private void releaseEdge(Tier t, WorkerRank o, EdgeKey key) {
        Edge e = t.edges.get(key);
        e.owners.remove(o);
        if (e.owners.isEmpty()) {
            t.edges.remove(key);
        }
    }

    private void leave(WorkerRank o, Node node) {
        node.holders.remove(o);
        if (node.holders.isEmpty()) {
            for (Node c : node.children.values()) {
                c.parent = null;
            }
            node.children.clear();
            if (node.parent != null && node.parent.children.get(node.local) == node) {
                node.parent.children.remove(node.local);
            }
            node.parent = null;
        }
    }

    void clear(WorkerRank o) {
        for (Tier t : tiers.values()) {
            Map<Long, EdgeKey> rev = t.reverse.remove(o);
            if (rev != null) {
                for (EdgeKey key : rev.values()) {
                    releaseEdge(t, o, key);
                }
            }
            t.copies.remove(o);
        }
        Map<Long, Node> mine = lookup.get(o);
        if (mine != null) {
            for (Node n : new ArrayList<>(mine.values())) {
                leave(o, n);
            }
            mine.clear();
            copies.remove(o);
        }
    }

    void removeWorker(long worker) {
        for (WorkerRank o : owners()) {
            if (o.workerId() == worker) {
                clear(o);
            }
        }
    }

    List<WorkerRank> owners() {
        Set<WorkerRank> all = new HashSet<>(lookup.keySet());
        for (Tier t : tiers.values()) {
            all.addAll(t.reverse.keySet());
        }
        return new ArrayList<>(all);
    }

    /** Device matching per owner (docs/protocol/index.md#device-matching, no intersection trick) and the lower-tier
     * extension as written (docs/protocol/index.md#lower-tier-extension-and-the-per-instance-breakdown). */
    Map<WorkerRank, OwnerMatch> match(long[] q) {
        Map<WorkerRank, Integer> gpu = new HashMap<>();
        Map<WorkerRank, Integer> pos = new HashMap<>();
        Map<WorkerRank, Long> last = new HashMap<>();
        for (WorkerRank o : lookup.keySet()) {
            Node node = root;
            int depth = 0;
            while (depth < q.length) {
                Node c = node.children.get(q[depth]);
                if (c == null || !c.holders.containsKey(o)) {
                    break;
                }
                node = c;
                depth++;
            }
            if (depth > 0) {
                gpu.put(o, depth);
                pos.put(o, depth);
                last.put(o, node.holders.get(o));
            }
        }
        Map<StorageTier, Map<WorkerRank, Integer>> ext = new HashMap<>();
        for (StorageTier tier : new StorageTier[] {StorageTier.HOST_PINNED, StorageTier.DISK, StorageTier.EXTERNAL}) {
            Map<WorkerRank, Integer> e = new HashMap<>();
            ext.put(tier, e);
            Tier t = tiers.get(tier);
            if (t == null || q.length == 0) {
                continue;
            }
            Edge rootEdge = t.edges.get(new EdgeKey(null, q[0]));
            if (rootEdge != null) {
                for (WorkerRank o : rootEdge.owners) {
                    if (!pos.containsKey(o)) {
                        pos.put(o, 0);
                        last.put(o, null);
                    }
                }
            }
            for (WorkerRank o : new ArrayList<>(pos.keySet())) {
                int p = pos.get(o);
                Long l = last.get(o);
                int k = 0;
                while (p + k < q.length) {
                    Edge edge = t.edges.get(new EdgeKey(l, q[p + k]));
                    if (edge == null || !edge.owners.contains(o)) {
                        break;
                    }
                    l = edge.child;
                    k++;
                }
                e.put(o, k);
                pos.put(o, p + k);
                last.put(o, l);
            }
        }
        Map<WorkerRank, OwnerMatch> out = new HashMap<>();
        for (WorkerRank o : pos.keySet()) {
            int g = gpu.getOrDefault(o, 0);
            int c = g + ext.get(StorageTier.HOST_PINNED).getOrDefault(o, 0);
            int d = c
                    + ext.get(StorageTier.DISK).getOrDefault(o, 0)
                    + ext.get(StorageTier.EXTERNAL).getOrDefault(o, 0);
            if (d > 0) {
                out.put(o, new OwnerMatch(o.workerId(), o.dpRank(), g, c, d));
            }
        }
        return out;
    }

    /** Engine hashes an owner holds in a tier, for choosing parents and removals. */
    List<Long> held(WorkerRank o, StorageTier tier) {
        if (tier == StorageTier.DEVICE) {
            return new ArrayList<>(lookup.getOrDefault(o, Map.of()).keySet());
        }
        Tier t = tiers.get(tier);
        return t == null
                ? new ArrayList<>()
                : new ArrayList<>(t.reverse.getOrDefault(o, Map.of()).keySet());
    }

    long deviceBlockCount() {
        Map<Node, Boolean> distinct = new IdentityHashMap<>();
        for (Map<Long, Node> m : lookup.values()) {
            for (Node n : m.values()) {
                distinct.put(n, true);
            }
        }
        return distinct.size();
    }

    int edgeCount(StorageTier tier) {
        Tier t = tiers.get(tier);
        return t == null ? 0 : t.edges.size();
    }

    int copies(WorkerRank o, StorageTier tier, long h) {
        Map<Long, Integer> cp = tier == StorageTier.DEVICE
                ? copies.get(o)
                : tiers.containsKey(tier) ? tiers.get(tier).copies.get(o) : null;
        return cp == null ? 0 : Objects.requireNonNullElse(cp.get(h), 0);
    }
}
