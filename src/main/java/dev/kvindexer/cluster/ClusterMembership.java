package dev.kvindexer.cluster;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
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
 * cluster manager's member list, and entries of departed nodes are pruned whenever the map is read.
 */
public final class ClusterMembership {
    static final String MAP = "kvindexer.members";

    private final ClusterManager manager;
    private final String self;
    private final AsyncMap<String, String> members;
    private volatile String url;

    private ClusterMembership(ClusterManager manager, AsyncMap<String, String> members) {
        this.manager = manager;
        this.self = manager.getNodeId();
        this.members = members;
    }

    /** Opens the member map; the node announces itself with {@link #announce} once its HTTP port is bound. */
    public static Future<ClusterMembership> open(Vertx vertx, ClusterManager manager) {
        return vertx.sharedData().<String, String>getAsyncMap(MAP).map(map -> new ClusterMembership(manager, map));
    }

    /** Announces this node's HTTP URL, not ready yet, so peers that are still recovering do not pick it as a source. */
    public Future<Void> announce(String httpUrl) {
        this.url = httpUrl;
        return announce(false);
    }

    /** This node finished recovery: others may recover from it. */
    public Future<Void> markReady() {
        return announce(true);
    }

    private Future<Void> announce(boolean ready) {
        return members.put(self, new JsonObject().put("url", url).put("ready", ready).encode());
    }

    /** HTTP URLs of the other live nodes, sorted; only those that finished their own recovery when {@code readyOnly}. */
    public Future<List<String>> peers(boolean readyOnly) {
        return members.entries().map(entries -> {
            Set<String> live = new HashSet<>(manager.getNodes());
            List<String> out = new ArrayList<>();
            for (Map.Entry<String, String> e : entries.entrySet()) {
                if (!live.contains(e.getKey())) {
                    members.remove(e.getKey());
                    continue;
                }
                JsonObject info = new JsonObject(e.getValue());
                if (!e.getKey().equals(self) && (!readyOnly || info.getBoolean("ready", false))) {
                    out.add(info.getString("url"));
                }
            }
            out.sort(null);
            return out;
        });
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
