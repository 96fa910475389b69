package dev.kvindexer.ingest;

import java.util.Collection;

/** Listener lifecycle states (docs/protocol/zmq.md#listener-lifecycle) with their JSON names. */
public enum ListenerState {
    PENDING("pending"),
    ACTIVE("active"),
    PAUSED("paused"),
    FAILED("failed"),
    /** Sharded cluster: other nodes hold this instance's shard, and this node opens no socket for it. */
    REMOTE("remote");

    private final String jsonName;

    ListenerState(String jsonName) {
        this.jsonName = jsonName;
    }

    public String jsonName() {
        return jsonName;
    }

    /** Pause is allowed from pending or active (docs/api/dynamo.md#test-routes-log-reopening-access-log). */
    public boolean pausable() {
        return this == PENDING || this == ACTIVE;
    }

    /** Instance status from its listeners: failed > pending > active > paused > remote. */
    public static ListenerState aggregate(Collection<ListenerState> states) {
        if (states.contains(FAILED)) {
            return FAILED;
        }
        if (states.contains(PENDING)) {
            return PENDING;
        }
        if (states.contains(ACTIVE)) {
            return ACTIVE;
        }
        return !states.isEmpty() && states.stream().allMatch(s -> s == REMOTE) ? REMOTE : PAUSED;
    }
}
