package dev.kvindexer.http;

import dev.kvindexer.cluster.ClusterMembership;
import dev.kvindexer.cluster.PeerSet;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.NodeMeters;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.registry.ConductorRegistrar;
import dev.kvindexer.registry.Registrar;
import dev.kvindexer.registry.RegistrationService;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * What the HTTP verticles share with the rest of the node; all members are thread-safe.
 *
 * @param registrar     what /register and /unregister go through: this node, or the whole cluster
 * @param registrations this node's own registrations (listeners, partitions, test pause/resume)
 * @param startupWait   what startup still waits for (recovery, initial workers), or null once it is done
 * @param membership    the cluster's other nodes, or null on a standalone node
 * @param accessLog     the access log, or null when none is configured
 * @param meters        HTTP, Vert.x, JVM and recovery measurements for /metrics
 * @param conductor     the C++ Mooncake Conductor's registrations and state (msgpack requests, SPEC §11)
 * @param tenantFallback the Dynamo API takes tenant_id as the group when routing_group is absent, and echoes it
 */
public record NodeServices(Registrar registrar, RegistrationService registrations, Registry registry, PeerSet peers,
                           EventCounters counters, Watermarks watermarks, ZmqIngest ingest, boolean testEndpoints,
                           Supplier<String> startupWait, ClusterMembership membership, AccessLog accessLog,
                           NodeMeters meters, ConductorRegistrar conductor, boolean tenantFallback) {

    /** Why /ready answers 503: the startup gate is closed or ingest is recovering from a failure; null when ready. */
    public String notReadyReason() {
        String waiting = startupWait.get();
        return waiting != null ? waiting : ingest.degradedReason();
    }

    /** GET /peers: registered peers and, in a cluster, the other live nodes, sorted and without repeats. */
    public Future<List<String>> allPeers() {
        Future<List<String>> discovered = membership == null ? Future.succeededFuture(List.of()) : membership.peers(false);
        return discovered.map(found -> {
            TreeSet<String> all = new TreeSet<>(peers.list());
            all.addAll(found);
            return List.copyOf(all);
        });
    }
}
