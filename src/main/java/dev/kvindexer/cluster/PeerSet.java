package dev.kvindexer.cluster;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Peer indexer URLs registered through /register_peer or --peers, compared as exact strings. Bounded, since any
 * client may register one: a peer list is a handful of replicas, never thousands.
 */
public final class PeerSet {
    public static final int MAX_PEERS = 1024;
    public static final int MAX_URL_CHARS = 2048;

    private final Set<String> urls = new LinkedHashSet<>();

    /** Adds a peer; idempotent. False, changing nothing, when the URL is too long or the set is full. */
    public synchronized boolean add(String url) {
        if (url.length() > MAX_URL_CHARS || (urls.size() >= MAX_PEERS && !urls.contains(url))) {
            return false;
        }
        urls.add(url);
        return true;
    }

    public synchronized boolean remove(String url) {
        return urls.remove(url);
    }

    public synchronized List<String> list() {
        return new ArrayList<>(urls);
    }
}
