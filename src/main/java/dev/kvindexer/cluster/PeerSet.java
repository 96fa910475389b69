package dev.kvindexer.cluster;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Peer indexer URLs registered through /register_peer or --peers, compared as exact strings. */
public final class PeerSet {
    private final Set<String> urls = new LinkedHashSet<>();

    /** Adds a peer; idempotent. */
    public synchronized void add(String url) {
        urls.add(url);
    }

    public synchronized boolean remove(String url) {
        return urls.remove(url);
    }

    public synchronized List<String> list() {
        return new ArrayList<>(urls);
    }
}
