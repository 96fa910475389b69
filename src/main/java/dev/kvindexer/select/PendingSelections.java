package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Selections made with a {@code selection_id}, kept for a later replay booking (docs/api/selection.md#replay-of-a-pending-selection): bounded by age, count
 * and approximate bytes, oldest evicted first, single use. A booking that fails leaves its entry for a retry.
 */
public final class PendingSelections {
    /**
     * What a replay books: the rank chosen and the request's normalized inputs at select time.
     *
     * @param sessionId the session the booking binds, when session affinity is on; else null
     */
    public record Pending(
            long workerId,
            int dpRank,
            long[] blockHashes,
            long[] sequenceHashes,
            long isl,
            long effectivePrefill,
            Long expectedOutputTokens,
            String loraName,
            boolean trackPrefill,
            String sessionId) {}

    private record Key(PartitionKey partition, String selectionId) {}

    private record Entry(Pending pending, long insertedAt, long bytes) {}

    private final long ttlMillis;
    private final int maxEntries;
    private final long maxBytes;
    /** Insertion order is age order: the clock is monotonic and a replaced entry is inserted anew. */
    private final LinkedHashMap<Key, Entry> entries = new LinkedHashMap<>();

    private long bytes;

    public PendingSelections(long ttlMillis, int maxEntries, long maxBytes) {
        this.ttlMillis = ttlMillis;
        this.maxEntries = maxEntries;
        this.maxBytes = maxBytes;
    }

    public void put(PartitionKey partition, String selectionId, Pending pending, long now) {
        Key key = new Key(partition, selectionId);
        dropExpired(now);
        Entry old = entries.remove(key);
        if (old != null) {
            bytes -= old.bytes;
        }
        long size = 8L * (pending.blockHashes().length + pending.sequenceHashes().length)
                + selectionId.length()
                + partition.modelName().length()
                + partition.routingGroup().length()
                + (pending.loraName() == null ? 0 : pending.loraName().length())
                + (pending.sessionId() == null ? 0 : pending.sessionId().length());
        entries.put(key, new Entry(pending, now, size));
        bytes += size;
        Iterator<Entry> it = entries.values().iterator();
        while ((entries.size() > maxEntries || bytes > maxBytes) && it.hasNext()) {
            bytes -= it.next().bytes;
            it.remove();
        }
    }

    /** The entry a replay would book, or null when absent or older than the TTL. */
    public Pending peek(PartitionKey partition, String selectionId, long now) {
        Entry e = entries.get(new Key(partition, selectionId));
        return e == null || now - e.insertedAt > ttlMillis ? null : e.pending;
    }

    /** Forgets an entry: it was booked, or an explicit booking of the same id replaces it. */
    public void remove(PartitionKey partition, String selectionId) {
        Entry e = entries.remove(new Key(partition, selectionId));
        if (e != null) {
            bytes -= e.bytes;
        }
    }

    public int size() {
        return entries.size();
    }

    private void dropExpired(long now) {
        Iterator<Map.Entry<Key, Entry>> it = entries.entrySet().iterator();
        while (it.hasNext()) {
            Entry e = it.next().getValue();
            if (now - e.insertedAt <= ttlMillis) {
                return;
            }
            bytes -= e.bytes;
            it.remove();
        }
    }
}
