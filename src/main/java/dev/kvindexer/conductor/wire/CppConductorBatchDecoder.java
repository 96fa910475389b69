package dev.kvindexer.conductor.wire;

import dev.kvindexer.conductor.event.CppConductorEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.wire.MalformedBatchException;
import dev.kvindexer.wire.MsgpackValues;
import dev.kvindexer.wire.MsgpackValues.InvalidUtf8;
import dev.kvindexer.wire.MsgpackValues.MapValue;
import dev.kvindexer.wire.MsgpackValues.Nil;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Decodes the batches of the C++ Mooncake Conductor's registrations as strictly as it does
 * (docs/protocol/events.md#c-conductor-events): a
 * {@code vLLM} registration's GPU block events, checked against what was registered, or a {@code Mooncake}
 * registration's Store object events. A batch whose envelope is wrong is refused whole; an event that breaks a rule
 * is skipped and counted, and the rest of the batch applies. The registration's type alone picks the rules.
 */
public final class CppConductorBatchDecoder {
    /** The events of one batch that passed, and how many were skipped with the first reason. */
    public record Batch(List<CppConductorEvent> events, int rejected, String firstRejection) {}

    private static final Set<String> STORED_ONLY = Set.of(
            "parent_block_hash",
            "token_ids",
            "block_size",
            "lora_id",
            "lora_name",
            "kv_cache_spec_kind",
            "kv_cache_spec_sliding_window",
            "extra_keys");
    private static final List<String> STORED_REQUIRED = List.of(
            "type", "block_hashes", "parent_block_hash", "token_ids", "block_size", "lora_id", "medium", "lora_name");
    private static final List<String> STORE_EVENT_REQUIRED = List.of(
            "event_id",
            "timestamp",
            "event_type",
            "model_name",
            "block_size",
            "additional_salt",
            "lora_name",
            "tenant_id",
            "backend_id",
            "medium",
            "dp_rank");
    private static final Set<String> STORE_STORED_ONLY = Set.of("parent_hash", "token_ids", "parent_block_hash");
    /** Entries the rules ask only to be there or not: their values (a block's tokens) are checked, never built. */
    private static final Set<String> PRESENCE_ONLY = Set.of("token_ids", "extra_keys");

    private final boolean engine;
    private final int registeredRank;
    private final long blockSize;
    private final String loraName;
    private final boolean loraIds;

    private CppConductorBatchDecoder(
            boolean engine, int registeredRank, long blockSize, String loraName, boolean loraIds) {
        this.engine = engine;
        this.registeredRank = registeredRank;
        this.blockSize = blockSize;
        this.loraName = loraName;
        this.loraIds = loraIds;
    }

    /**
     * For a {@code vLLM} registration: its rank, block size and LoRA name ("" for the base model). {@code loraIds}
     * accepts a set lora_id, which the reference always refuses, when the event's lora_name is the registration's.
     */
    public static CppConductorBatchDecoder forEngine(
            int registeredRank, long blockSize, String loraName, boolean loraIds) {
        return new CppConductorBatchDecoder(true, registeredRank, blockSize, loraName, loraIds);
    }

    /** For a {@code Mooncake} registration (the Store master's publisher). */
    public static CppConductorBatchDecoder forStore() {
        return new CppConductorBatchDecoder(false, -1, 0, "", false);
    }

    /** Thrown for one event that breaks a rule; the batch goes on without it. */
    private static final class Rejected extends Exception {
        private static final long serialVersionUID = 1L;

        Rejected(String message) {
            super(message, null, false, false);
        }
    }

    public Batch decode(byte[] payload) throws MalformedBatchException {
        Object root;
        try {
            root = MsgpackValues.first(payload, PRESENCE_ONLY);
        } catch (MsgpackValues.Malformed e) {
            throw new MalformedBatchException("undecodable batch: " + e.getMessage());
        }
        if (!(root instanceof List<?> envelope) || envelope.size() != 3) {
            throw new MalformedBatchException("a batch is an array of exactly 3 elements");
        }
        Object ts = envelope.get(0);
        if (engine ? !(ts instanceof Double d && Double.isFinite(d)) : !(ts instanceof Long t && t >= 0)) {
            throw new MalformedBatchException(
                    engine
                            ? "batch timestamp must be a finite float"
                            : "batch timestamp must be a non-negative integer (milliseconds)");
        }
        if (!(envelope.get(1) instanceof List<?> events)) {
            throw new MalformedBatchException("batch events must be an array");
        }
        Object rank = envelope.get(2);
        if (rank != Nil.INSTANCE && !(rank instanceof Long r && r >= 0)) {
            throw new MalformedBatchException("batch dp_rank must be nil or a non-negative integer");
        }
        if (engine && rank instanceof Long r && r != registeredRank) {
            throw new MalformedBatchException("batch dp_rank " + r + " is not the registered rank " + registeredRank);
        }
        List<CppConductorEvent> out = new ArrayList<>(events.size());
        int rejected = 0;
        String first = null;
        for (Object e : events) {
            try {
                if (!(e instanceof MapValue event)) {
                    throw new Rejected("an event must be a map");
                }
                CppConductorEvent decoded = engine ? engineEvent(event) : storeEvent(event, (Long) ts);
                if (decoded != null) {
                    out.add(decoded);
                }
            } catch (Rejected r) {
                rejected++;
                if (first == null) {
                    first = r.getMessage();
                }
            }
        }
        return new Batch(out, rejected, first);
    }

    /** A vLLM event; null for one the rules ignore (another medium). */
    private CppConductorEvent engineEvent(MapValue e) throws Rejected {
        String type = string(e.get("type"), "type");
        switch (type) {
            case "BlockStored" -> {
                for (String key : STORED_REQUIRED) {
                    require(e, key);
                }
                if (!(e.get("block_size") instanceof Long size) || size != blockSize) {
                    throw new Rejected("block_size differs from the registration's " + blockSize);
                }
                if (e.get("lora_id") != Nil.INSTANCE && !(loraIds && !loraName.isEmpty())) {
                    throw new Rejected("lora_id cannot be validated against trusted registration");
                }
                Object lora = e.get("lora_name");
                if (!(lora == Nil.INSTANCE ? "" : lora).equals(loraName)) {
                    throw new Rejected("lora_name differs from the registration's");
                }
                requireGroupZero(e);
                Object kind = e.get("kv_cache_spec_kind");
                if (kind != null && kind != Nil.INSTANCE && !"full_attention".equals(kind)) {
                    throw new Rejected("only full_attention blocks are indexed");
                }
                Object window = e.get("kv_cache_spec_sliding_window");
                if (window != null && window != Nil.INSTANCE) {
                    throw new Rejected("sliding-window blocks are not indexed");
                }
                return onGpu(e) ? new CppConductorEvent.GpuStored(keys(e.get("block_hashes"))) : null;
            }
            case "BlockRemoved" -> {
                require(e, "block_hashes");
                require(e, "medium");
                for (String key : STORED_ONLY) {
                    if (e.has(key)) {
                        throw new Rejected("BlockRemoved carries " + key);
                    }
                }
                requireGroupZero(e);
                return onGpu(e) ? new CppConductorEvent.GpuRemoved(keys(e.get("block_hashes"))) : null;
            }
            case "AllBlocksCleared" -> {
                for (String key : STORED_REQUIRED) {
                    if (!key.equals("type") && e.has(key)) {
                        throw new Rejected("AllBlocksCleared carries " + key);
                    }
                }
                return CppConductorEvent.GpuCleared.INSTANCE;
            }
            default -> throw new Rejected("unknown event type " + type);
        }
    }

    /** Only cache group 0 is indexed: a store or removal of another group is refused, whatever its medium. */
    private static void requireGroupZero(MapValue e) throws Rejected {
        Object group = e.get("group_idx");
        if (group != null && group != Nil.INSTANCE && !(group instanceof Long g && g == 0)) {
            throw new Rejected("only group_idx 0 is indexed");
        }
    }

    /** The medium must be GPU, in any case; any other, nil included, makes the event one to ignore. */
    private static boolean onGpu(MapValue e) {
        return e.get("medium") instanceof String m && m.equalsIgnoreCase("gpu");
    }

    /** Block hashes as keys: a uint is the key; a bin of 8 bytes or more gives its last 8 bytes, big-endian. */
    private static long[] keys(Object hashes) throws Rejected {
        if (!(hashes instanceof List<?> list)) {
            throw new Rejected("block_hashes must be an array");
        }
        long[] out = new long[list.size()];
        if (list instanceof MsgpackValues.Integers uints) {
            for (int i = 0; i < out.length; i++) {
                out[i] = uints.getLong(i);
                if (out[i] < 0 && !uints.aboveLong(i)) {
                    throw notAHash(i);
                }
            }
            return out;
        }
        for (int i = 0; i < out.length; i++) {
            Object h = list.get(i);
            if (h instanceof Long v && v >= 0) {
                out[i] = v;
            } else if (h instanceof BigInteger b) {
                out[i] = b.longValue();
            } else if (h instanceof MsgpackValues.Bin bin && bin.length() >= 8) {
                // The key is the hash's last 8 bytes, big-endian (ByteBuffer's default order).
                out[i] = ByteBuffer.wrap(bin.source(), bin.offset() + bin.length() - Long.BYTES, Long.BYTES)
                        .getLong();
            } else {
                throw notAHash(i);
            }
        }
        return out;
    }

    private static Rejected notAHash(int i) {
        return new Rejected("block_hashes[" + i + "] is neither a uint nor a bin of 8 bytes or more");
    }

    /** A Store master event; null for one the rules ignore (another medium). */
    private CppConductorEvent storeEvent(MapValue e, long batchTimestamp) throws Rejected {
        String eventType = storeEventType(e, batchTimestamp);
        String tenant = string(e.get("tenant_id"), "tenant_id");
        String backend = string(e.get("backend_id"), "backend_id");
        if (!(e.get("dp_rank") instanceof Long rank) || rank < 0) {
            throw new Rejected("dp_rank must be a non-negative integer");
        }
        if (eventType.equals("cleared")) {
            if (e.has("object_key")) {
                throw new Rejected("a cleared event names no object");
            }
            if (backend.isEmpty() || tenant.isEmpty()) {
                throw new Rejected("a cleared event needs backend_id and tenant_id");
            }
            return new CppConductorEvent.ObjectsCleared(backend, tenant);
        }
        return objectEvent(e, eventType.equals("stored"), tenant, backend);
    }

    /** Checks what every Store master event carries, up to its type; its {@code event_type}. */
    private static String storeEventType(MapValue e, long batchTimestamp) throws Rejected {
        for (String key : STORE_EVENT_REQUIRED) {
            require(e, key);
        }
        if (!(e.get("event_id") instanceof Long id && id >= 0) && !(e.get("event_id") instanceof BigInteger)) {
            throw new Rejected("event_id must be a uint");
        }
        if (!(e.get("timestamp") instanceof Long t) || t != batchTimestamp) {
            throw new Rejected("timestamp differs from the batch's");
        }
        String eventType = string(e.get("event_type"), "event_type");
        String legacy = switch (eventType) {
            case "stored" -> "BlockStored";
            case "removed" -> "BlockRemoved";
            case "cleared" -> "AllBlocksCleared";
            default -> throw new Rejected("unknown event_type " + eventType);
        };
        if (e.has("type") && !legacy.equals(e.get("type"))) {
            throw new Rejected("type " + e.get("type") + " does not match event_type " + eventType);
        }
        return eventType;
    }

    /** A Store master event about one object, stored or removed; null for one the rules ignore (another medium). */
    private static CppConductorEvent objectEvent(MapValue e, boolean stored, String tenant, String backend)
            throws Rejected {
        require(e, "group_id");
        require(e, "seq_hashes");
        require(e, "base_block_idx");
        Object group = e.get("group_id");
        if (group != Nil.INSTANCE && !(group instanceof String g && (g.isEmpty() || g.matches("0+")))) {
            throw new Rejected("only group 0 is indexed");
        }
        String model = optionalString(e.get("model_name"), "model_name");
        String lora = optionalString(e.get("lora_name"), "lora_name");
        Object size = e.get("block_size");
        if (size != Nil.INSTANCE && !(size instanceof Long)) {
            throw new Rejected("block_size must be an integer or nil");
        }
        StorageTier tier = sharedTier(e.get("medium"));
        String objectKey = e.get("object_key") instanceof String k ? k : "";
        if (tier == null) {
            return null;
        }
        if (backend.isEmpty() || objectKey.isEmpty()) {
            throw new Rejected("backend_id and object_key must not be empty");
        }
        List<?> seqHashes = seqHashes(e);
        String hash = e.get("connector_block_hash") instanceof String h ? h : null;
        if (stored) {
            long key = storedKey(e, seqHashes, hash);
            if (model == null || !(size instanceof Long s)) {
                throw new Rejected("a stored object names its model and block size");
            }
            return new CppConductorEvent.ObjectStored(
                    tenant, model, lora == null ? "" : lora, s, backend, objectKey, tier, key, connectorHex(hash));
        }
        for (String key : STORE_STORED_ONLY) {
            if (e.has(key)) {
                throw new Rejected("a removed event carries " + key);
            }
        }
        long[] seq = new long[seqHashes.size()];
        for (int i = 0; i < seq.length; i++) {
            Long v = asKey(seqHashes.get(i));
            if (v == null) {
                throw new Rejected("seq_hashes must be an array of uints");
            }
            seq[i] = v;
        }
        return new CppConductorEvent.ObjectRemoved(
                tenant,
                model,
                lora,
                size instanceof Long s ? s : null,
                backend,
                objectKey,
                tier,
                hash == null ? null : connectorHex(hash),
                seq);
    }

    /** {@code seq_hashes}, which {@code block_hashes} must repeat when present. */
    private static List<?> seqHashes(MapValue e) throws Rejected {
        if (!(e.get("seq_hashes") instanceof List<?> seqHashes)) {
            throw new Rejected("seq_hashes must be an array");
        }
        if (e.has("block_hashes") && !seqHashes.equals(e.get("block_hashes"))) {
            throw new Rejected("block_hashes differs from seq_hashes");
        }
        return seqHashes;
    }

    /**
     * A stored object's key, from its connector block hash: {@code seq_hashes} must be empty or that key, and a
     * {@code parent_block_hash} the {@code parent_hash}.
     */
    private static long storedKey(MapValue e, List<?> seqHashes, String hash) throws Rejected {
        require(e, "parent_hash");
        require(e, "token_ids");
        if (e.has("parent_block_hash") && !e.get("parent_block_hash").equals(e.get("parent_hash"))) {
            throw new Rejected("parent_block_hash differs from parent_hash");
        }
        long key = connectorKey(hash);
        if (!seqHashes.isEmpty() && !(seqHashes.size() == 1 && Long.valueOf(key).equals(asKey(seqHashes.get(0))))) {
            throw new Rejected("seq_hashes must be empty or exactly the connector block hash's key");
        }
        return key;
    }

    private static Long asKey(Object seqHash) {
        if (seqHash instanceof Long v && v >= 0) {
            return v;
        }
        return seqHash instanceof BigInteger b ? b.longValue() : null;
    }

    /** CPU or disk, in any case; null for any other medium. */
    private static StorageTier sharedTier(Object medium) {
        if (!(medium instanceof String m)) {
            return null;
        }
        return switch (m.toLowerCase(Locale.ROOT)) {
            case "cpu" -> StorageTier.HOST_PINNED;
            case "disk" -> StorageTier.DISK;
            default -> null;
        };
    }

    /** The key in a connector block hash: its last 16 digits ({@link #connectorHex} says which hashes are valid). */
    static long connectorKey(String hash) throws Rejected {
        String digits = connectorHex(hash);
        return Long.parseUnsignedLong(digits.substring(digits.length() - 16), 16);
    }

    /**
     * A connector block hash as the Conductor compares it: optional 0x, then 16 or more ASCII hex digits, even length,
     * given back in lower case without the prefix.
     */
    static String connectorHex(String hash) throws Rejected {
        if (hash == null) {
            throw new Rejected("connector_block_hash is required");
        }
        String digits = hash.startsWith("0x") || hash.startsWith("0X") ? hash.substring(2) : hash;
        if (digits.length() < 16
                || digits.length() % 2 != 0
                || !digits.chars().allMatch(CppConductorBatchDecoder::isAsciiHex)) {
            throw new Rejected("connector_block_hash must be an even number of 16 or more hex digits");
        }
        return digits.toLowerCase(Locale.ROOT);
    }

    /** {@link Character#digit} would take any script's digits; the Conductor reads ASCII hex only. */
    private static boolean isAsciiHex(int c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    private static void require(MapValue e, String key) throws Rejected {
        if (!e.has(key)) {
            throw new Rejected("the event has no " + key);
        }
    }

    private static String string(Object v, String field) throws Rejected {
        if (v instanceof String s) {
            return s;
        }
        if (v instanceof InvalidUtf8) {
            throw new Rejected(field + " is not UTF-8");
        }
        throw new Rejected(field + " must be a string");
    }

    private static String optionalString(Object v, String field) throws Rejected {
        return v == Nil.INSTANCE || v == null ? null : string(v, field);
    }
}
