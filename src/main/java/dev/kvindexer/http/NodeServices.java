package dev.kvindexer.http;

import dev.kvindexer.cluster.PeerSet;
import dev.kvindexer.cluster.ReadyGate;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.registry.RegistrationService;
import dev.kvindexer.registry.Registry;

/** What the HTTP verticles share with the rest of the node; all members are thread-safe. */
public record NodeServices(RegistrationService registrations, Registry registry, PeerSet peers,
                           EventCounters counters, Watermarks watermarks, ZmqIngest ingest, boolean testEndpoints,
                           ReadyGate gate) {
}
