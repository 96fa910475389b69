package dev.kvindexer.metrics;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Node-wide event counters with the label values of Dynamo's {@code kv_cache_events_applied} and
 * {@code kv_cache_event_warnings} (SPEC §7.2). Written by partitions and ingest threads, read by /metrics.
 */
public final class EventCounters {
    private final ConcurrentHashMap<String, LongAdder> applied = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> warnings = new ConcurrentHashMap<>();

    /** Counts {@code n} events of {@code eventType} (stored, removed, cleared) that ended with {@code status}. */
    public void applied(String eventType, String status, long n) {
        if (n > 0) {
            applied.computeIfAbsent(eventType + "|" + status, k -> new LongAdder()).add(n);
        }
    }

    public void warning(String kind, long n) {
        if (n > 0) {
            warnings.computeIfAbsent(kind, k -> new LongAdder()).add(n);
        }
    }

    public long appliedCount(String eventType, String status) {
        LongAdder a = applied.get(eventType + "|" + status);
        return a == null ? 0 : a.sum();
    }

    public long warningCount(String kind) {
        LongAdder a = warnings.get(kind);
        return a == null ? 0 : a.sum();
    }

    /** Snapshot keyed "event_type|status". */
    public Map<String, Long> appliedSnapshot() {
        Map<String, Long> out = new TreeMap<>();
        applied.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    public Map<String, Long> warningSnapshot() {
        Map<String, Long> out = new TreeMap<>();
        warnings.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }
}
