package dev.kvindexer.metrics;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Node-wide event counters: the label values of Dynamo's {@code kv_cache_events_applied} and
 * {@code kv_cache_event_warnings} (docs/operations.md#metrics), and our gap, replay and gap repair counts. Written by partitions, ingest and
 * replay threads; read by /metrics.
 */
public final class EventCounters {
    /** A gap in a ZMQ stream's batch seqs: each one starts a replay, or loses batches when there is no replay. */
    public static final String GAP_ZMQ_SEQ = "zmq_seq";
    /**
     * A jump in a standardized event stream's event_ids (docs/protocol/events.md#standardized-kv-events); nothing can
     * replay those.
     */
    public static final String GAP_EVENT_ID = "event_id";

    public static final String REPLAY_COMPLETE = "complete";
    public static final String REPLAY_INCOMPLETE = "incomplete";
    /** A stream's lost batches came back with a peer's exact copy of it. */
    public static final String GAP_REPAIR_REPAIRED = "repaired";
    /** Every peer answered, and none held the stream past the gap without a loss of its own. */
    public static final String GAP_REPAIR_NO_PEER = "no_peer";
    /** No peer repaired the stream, and at least one could not be asked or gave an answer that was not usable. */
    public static final String GAP_REPAIR_FAILED = "failed";
    /** ZMQ input that could not be decoded: a message of the wrong shape or size (and the connection it cost). */
    public static final String UNDECODABLE_FRAME = "frame";
    /** A whole batch skipped. */
    public static final String UNDECODABLE_BATCH = "batch";
    /** One event skipped; the rest of its batch applied. */
    public static final String UNDECODABLE_EVENT = "event";

    /** By event type, then status: both are constants, so counting an event builds no key. */
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, LongAdder>> applied = new ConcurrentHashMap<>();

    private final ConcurrentHashMap<String, LongAdder> warnings = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> gaps = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> replays = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> undecodable = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> gapRepairs = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> disconnects = new ConcurrentHashMap<>();

    /** Counts {@code n} events of {@code eventType} (stored, removed, cleared) that ended with {@code status}. */
    public void applied(String eventType, String status, long n) {
        add(applied.computeIfAbsent(eventType, t -> new ConcurrentHashMap<>()), status, n);
    }

    /**
     * Counts {@code n} warnings of {@code kind}. A lost-batch count comes from a publisher's seqs, which can jump by
     * anything, so the count stops at {@code Long.MAX_VALUE} rather than wrap negative. Warnings are rare, so reading
     * the sum here costs nothing that matters.
     */
    public void warning(String kind, long n) {
        if (n > 0) {
            LongAdder a = warnings.computeIfAbsent(kind, k -> new LongAdder());
            a.add(Math.min(n, Long.MAX_VALUE - a.sum()));
        }
    }

    /**
     * {@code n} pieces of ZMQ input of {@code kind} ({@link #UNDECODABLE_FRAME}, {@link #UNDECODABLE_BATCH} or
     * {@link #UNDECODABLE_EVENT}) could not be decoded; they also count as Dynamo's warning of that name.
     */
    public void undecodable(String kind, long n) {
        add(undecodable, kind, n);
        warning(kind.equals(UNDECODABLE_FRAME) ? WarningKind.MALFORMED_FRAME : WarningKind.DECODE_ERROR, n);
    }

    /** A publisher connection ended, or could not be made, for {@code reason}. */
    public void disconnect(String reason) {
        add(disconnects, reason, 1);
    }

    public long disconnectCount(String reason) {
        LongAdder a = disconnects.get(reason);
        return a == null ? 0 : a.sum();
    }

    public Map<String, Long> disconnectSnapshot() {
        return snapshot(disconnects);
    }

    public long undecodableCount(String kind) {
        return count(undecodable, kind);
    }

    /** One gap detected, of {@link #GAP_ZMQ_SEQ} or {@link #GAP_EVENT_ID}. */
    public void gap(String source) {
        add(gaps, source, 1);
    }

    /** One replay ended, {@link #REPLAY_COMPLETE} or {@link #REPLAY_INCOMPLETE}. */
    public void replay(String outcome) {
        add(replays, outcome, 1);
    }

    /** One repair of lost batches from a peer ended: {@link #GAP_REPAIR_REPAIRED}, {@code _NO_PEER} or {@code _FAILED}. */
    public void gapRepair(String outcome) {
        add(gapRepairs, outcome, 1);
    }

    public long appliedCount(String eventType, String status) {
        ConcurrentHashMap<String, LongAdder> byStatus = applied.get(eventType);
        return byStatus == null ? 0 : count(byStatus, status);
    }

    public long warningCount(String kind) {
        return count(warnings, kind);
    }

    /** Snapshot keyed "event_type|status". */
    public Map<String, Long> appliedSnapshot() {
        Map<String, Long> out = new TreeMap<>();
        applied.forEach((type, byStatus) -> byStatus.forEach((status, n) -> out.put(type + "|" + status, n.sum())));
        return out;
    }

    public Map<String, Long> warningSnapshot() {
        return snapshot(warnings);
    }

    public Map<String, Long> gapSnapshot() {
        return snapshot(gaps);
    }

    public Map<String, Long> replaySnapshot() {
        return snapshot(replays);
    }

    public Map<String, Long> gapRepairSnapshot() {
        return snapshot(gapRepairs);
    }

    private static void add(ConcurrentHashMap<String, LongAdder> map, String key, long n) {
        if (n > 0) {
            map.computeIfAbsent(key, k -> new LongAdder()).add(n);
        }
    }

    private static long count(ConcurrentHashMap<String, LongAdder> map, String key) {
        LongAdder a = map.get(key);
        return a == null ? 0 : a.sum();
    }

    private static Map<String, Long> snapshot(ConcurrentHashMap<String, LongAdder> map) {
        Map<String, Long> out = new TreeMap<>();
        map.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }
}
