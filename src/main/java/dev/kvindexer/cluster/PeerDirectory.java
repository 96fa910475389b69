package dev.kvindexer.cluster;

import io.vertx.core.Future;
import java.util.List;
import java.util.TreeSet;

/** The peers this node knows: those registered through /register_peer or --peers and, in a cluster, the live members. */
public final class PeerDirectory {
    private final PeerSet registered = new PeerSet();
    private final ClusterMembership membership;

    /** {@code membership} is null on a standalone node. */
    public PeerDirectory(ClusterMembership membership) {
        this.membership = membership;
    }

    /** False, changing nothing, when the URL is longer than {@link PeerSet#MAX_URL_CHARS} or the list is full. */
    public boolean add(String url) {
        return registered.add(url);
    }

    public boolean remove(String url) {
        return registered.remove(url);
    }

    /** The peers registered through /register_peer or --peers, in registration order. */
    public List<String> registered() {
        return registered.list();
    }

    /** GET /peers: registered peers and the cluster's other live nodes, sorted and without repeats. */
    public Future<List<String>> all() {
        Future<List<String>> discovered =
                membership == null ? Future.succeededFuture(List.of()) : membership.peers(false);
        return discovered.map(found -> {
            TreeSet<String> all = new TreeSet<>(registered.list());
            all.addAll(found);
            return List.copyOf(all);
        });
    }
}
