package dev.kvindexer.cluster;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.spi.cluster.ClusterManager;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Who the other indexer nodes are and where their HTTP API is. Each node announces {@code {"url", "ready"}} under its
 * cluster node id in a cluster-wide map. The map entry of a crashed node outlives it, so liveness comes from the
 * cluster manager's member list, and entries of departed nodes are pruned whenever the map is read. An entry that
 * fails {@link ClusterValues}' checks is skipped: its URL would receive this node's bearer token during recovery.
 */
public final class ClusterMembership {
    static final String MAP = "kvindexer.members";

    private final ClusterManager manager;
    private final String self;
    private final AsyncMap<Object, Object> members;
    private final ClusterValues values;
    private volatile String url;
    private volatile boolean ready;

    private ClusterMembership(ClusterManager manager, AsyncMap<Object, Object> members, ClusterValues values) {
        this.manager = manager;
        this.self = manager.getNodeId();
        this.members = members;
        this.values = values;
    }

    /** Opens the member map; the node announces itself with {@link #announce} once its HTTP port is bound. */
    public static Future<ClusterMembership> open(Vertx vertx, ClusterManager manager, ClusterValues values) {
        return vertx.sharedData()
                .<Object, Object>getAsyncMap(MAP)
                .map(map -> new ClusterMembership(manager, map, values));
    }

    /** Announces this node's HTTP URL, not ready yet, so peers that are still recovering do not pick it as a source. */
    public Future<Void> announce(String httpUrl) {
        this.url = httpUrl;
        return put();
    }

    /** This node finished recovery: others may recover from it. */
    public Future<Void> markReady() {
        ready = true;
        return put();
    }

    /**
     * Writes this node's entry again when the map lost it (its copies were on members that crashed) or holds
     * something else under this node's id.
     */
    public Future<Void> reassert() {
        if (url == null) {
            return Future.succeededFuture();
        }
        return members.get(self).compose(stored -> {
            ClusterValues.Member now = stored == null ? null : values.member(self, stored);
            return now != null && now.equals(new ClusterValues.Member(url, ready)) ? Future.succeededFuture() : put();
        });
    }

    private Future<Void> put() {
        return members.put(self, values.member(self, url, ready));
    }

    /** HTTP URLs of the other live nodes, sorted; only those that finished their own recovery when {@code readyOnly}. */
    public Future<List<String>> peers(boolean readyOnly) {
        return members().map(all -> {
            List<String> out = new ArrayList<>();
            for (Member m : all) {
                if (!m.nodeId().equals(self) && (!readyOnly || m.ready())) {
                    out.add(m.url());
                }
            }
            out.sort(null);
            return out;
        });
    }

    /** A live node as it announced itself: its id, HTTP URL, and whether it finished its own recovery. */
    public record Member(String nodeId, String url, boolean ready) {}

    /** Every live node that announced itself, this one included, by node id; entries of departed nodes are dropped. */
    public Future<List<Member>> members() {
        return members.entries().map(entries -> {
            Set<String> live = new HashSet<>(manager.getNodes());
            List<Member> out = new ArrayList<>();
            for (Map.Entry<Object, Object> e : entries.entrySet()) {
                if (!live.contains(e.getKey())) {
                    members.remove(e.getKey());
                    continue;
                }
                ClusterValues.Member info = values.member((String) e.getKey(), e.getValue());
                if (info != null) {
                    out.add(new Member((String) e.getKey(), info.url(), info.ready()));
                }
            }
            out.sort(java.util.Comparator.comparing(Member::nodeId));
            return out;
        });
    }

    /** This node's id in the cluster (the key of its entry). */
    public String nodeId() {
        return self;
    }

    /** Members of the cluster, this node included. */
    public int memberCount() {
        return manager.getNodes().size();
    }

    /** Withdraws the announcement before the node leaves the cluster. */
    public Future<Void> leave() {
        return members.remove(self).mapEmpty();
    }
}
