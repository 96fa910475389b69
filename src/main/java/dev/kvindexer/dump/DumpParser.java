package dev.kvindexer.dump;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.io.IOException;
import java.io.InputStream;

/**
 * Streams a Dynamo-shaped /dump (docs/protocol/dump.md#json-document) into a {@link DumpHandler} without building the
 * document in memory:
 * {@code {"model:group": {"block_size": n, "events": [RouterEvent...]}}}, the oldest shape whose value is the
 * bare events array, and {@code {"error": ...}} values. Hashes are unsigned u64 numbers. Unknown members are
 * skipped, so dumps of newer Dynamo peers (residency_domain, start_position) load too. Our own two extensions,
 * {@code ref_counts} and {@code watermarks}, turn the dump into an exact snapshot; a third, {@code sequence_events},
 * holds blocks stored without tokens, which load as {@link KvEvent.StoredBySequence}.
 */
public final class DumpParser {
    private static final JsonFactory JSON = new JsonFactory();

    private DumpParser() {}

    /** Parses the whole document; throws IOException (with the JSON location) on malformed input. */
    public static void parse(InputStream in, DumpHandler sink) throws IOException {
        try (JsonParser p = JSON.createParser(in)) {
            expect(p.nextToken(), JsonToken.START_OBJECT, p);
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                PartitionKey key = splitKey(p.currentName());
                JsonToken t = p.nextToken();
                if (t == JsonToken.START_ARRAY) {
                    sink.partition(key, 0);
                    events(p, sink, false);
                } else if (t == JsonToken.START_OBJECT) {
                    partitionObject(p, key, sink);
                } else {
                    throw new IOException("partition " + key.dumpKey() + ": expected an object or an array");
                }
            }
        }
    }

    /**
     * Recovery splits the key at the first ':' (docs/protocol/recovery.md#recovery-algorithm); the model part is
     * unescaped (PartitionKey#dumpKey).
     */
    static PartitionKey splitKey(String key) throws IOException {
        PartitionKey parsed = PartitionKey.fromDumpKey(key);
        if (parsed == null) {
            throw new IOException("dump key without ':' " + key);
        }
        return parsed;
    }

    private static void partitionObject(JsonParser p, PartitionKey key, DumpHandler sink) throws IOException {
        int blockSize = 0;
        boolean started = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken t = p.nextToken();
            if (name.equals("error") && t == JsonToken.VALUE_STRING) {
                sink.partitionFailed(key, p.getText());
                started = true;
            } else if (name.equals("block_size") && t == JsonToken.VALUE_NUMBER_INT) {
                blockSize = p.getIntValue();
            } else if (name.equals("events") && t == JsonToken.START_ARRAY) {
                // block_size precedes events in every dump we and Dynamo write.
                sink.partition(key, blockSize);
                started = true;
                events(p, sink, false);
            } else if (name.equals("sequence_events") && t == JsonToken.START_ARRAY && started) {
                events(p, sink, true);
            } else if (name.equals("ref_counts") && t == JsonToken.START_ARRAY && started) {
                refCounts(p, sink);
            } else if (name.equals("watermarks") && t == JsonToken.START_ARRAY && started) {
                sink.exactSnapshot();
                watermarks(p, sink);
            } else {
                p.skipChildren();
            }
        }
        if (!started) {
            sink.partition(key, blockSize);
        }
    }

    /** {@code [[event_id, copies], ...]}: our extension, after the events it refers to. */
    private static void refCounts(JsonParser p, DumpHandler sink) throws IOException {
        while (p.nextToken() == JsonToken.START_ARRAY) {
            expect(p.nextToken(), JsonToken.VALUE_NUMBER_INT, p);
            int eventIndex = p.getIntValue();
            expect(p.nextToken(), JsonToken.VALUE_NUMBER_INT, p);
            int copies = p.getIntValue();
            expect(p.nextToken(), JsonToken.END_ARRAY, p);
            if (eventIndex < 0 || copies < 2) {
                throw new IOException("invalid ref_counts entry at " + p.currentLocation());
            }
            sink.copies(eventIndex, copies);
        }
    }

    /** {@code [{"worker_id": u64, "dp_rank": u32, "seq": u64}, ...]}: our extension. */
    private static void watermarks(JsonParser p, DumpHandler sink) throws IOException {
        while (p.nextToken() == JsonToken.START_OBJECT) {
            long worker = 0;
            int dpRank = 0;
            long seq = 0;
            int seen = 0;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                switch (name) {
                    case "worker_id" -> {
                        worker = u64(p);
                        seen |= 1;
                    }
                    case "dp_rank" -> dpRank = (int) Math.min(u64(p), Integer.MAX_VALUE);
                    case "seq" -> {
                        seq = u64(p);
                        seen |= 2;
                    }
                    default -> p.skipChildren();
                }
            }
            if (seen != 3) {
                throw new IOException("watermark without worker_id or seq at " + p.currentLocation());
            }
            sink.watermark(worker, dpRank, seq);
        }
    }

    private static void events(JsonParser p, DumpHandler sink, boolean bySequence) throws IOException {
        while (p.nextToken() == JsonToken.START_OBJECT) {
            routerEvent(p, sink, bySequence);
        }
    }

    private static void routerEvent(JsonParser p, DumpHandler sink, boolean bySequence) throws IOException {
        long worker = 0;
        boolean hasWorker = false;
        StorageTier tier = StorageTier.DEVICE;
        int dpRank = 0;
        KvEvent event = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken t = p.nextToken();
            switch (name) {
                case "worker_id" -> {
                    worker = u64(p);
                    hasWorker = true;
                }
                case "storage_tier" -> tier = t == JsonToken.VALUE_NULL ? StorageTier.DEVICE : tier(p);
                case "event" -> {
                    expect(t, JsonToken.START_OBJECT, p);
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String inner = p.currentName();
                        JsonToken it = p.nextToken();
                        if (inner.equals("dp_rank") && it == JsonToken.VALUE_NUMBER_INT) {
                            dpRank = p.getIntValue();
                        } else if (inner.equals("data")) {
                            event = data(p, it);
                        } else {
                            p.skipChildren();
                        }
                    }
                }
                default -> p.skipChildren();
            }
        }
        if (!hasWorker || event == null) {
            throw new IOException("RouterEvent without worker_id or event.data at " + p.currentLocation());
        }
        event = retier(event, tier);
        if (bySequence) {
            if (!(event instanceof KvEvent.Stored s)) {
                throw new IOException("sequence_events holds only stored events, at " + p.currentLocation());
            }
            event = new KvEvent.StoredBySequence(s.tier(), s.hasParent(), s.parentHash(), s.blockHashes());
        }
        sink.event(worker, dpRank, event);
    }

    private static KvEvent data(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_STRING && p.getText().equals("cleared")) {
            return KvEvent.Cleared.INSTANCE;
        }
        expect(t, JsonToken.START_OBJECT, p);
        KvEvent out = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String variant = p.currentName();
            JsonToken vt = p.nextToken();
            if (variant.equals("stored")) {
                out = stored(p, vt);
            } else if (variant.equals("removed")) {
                out = removed(p, vt);
            } else {
                p.skipChildren();
            }
        }
        if (out == null) {
            throw new IOException("unknown event.data variant at " + p.currentLocation());
        }
        return out;
    }

    private static KvEvent.Stored stored(JsonParser p, JsonToken t) throws IOException {
        expect(t, JsonToken.START_OBJECT, p);
        boolean hasParent = false;
        long parent = 0;
        LongArrayList blocks = new LongArrayList();
        LongArrayList tokens = new LongArrayList();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken vt = p.nextToken();
            if (name.equals("parent_hash")) {
                hasParent = vt != JsonToken.VALUE_NULL;
                parent = hasParent ? u64(p) : 0;
            } else if (name.equals("blocks")) {
                expect(vt, JsonToken.START_ARRAY, p);
                while (p.nextToken() == JsonToken.START_OBJECT) {
                    long block = 0;
                    long local = 0;
                    int seen = 0;
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String f = p.currentName();
                        p.nextToken();
                        if (f.equals("block_hash")) {
                            block = u64(p);
                            seen |= 1;
                        } else if (f.equals("tokens_hash")) {
                            local = u64(p);
                            seen |= 2;
                        } else {
                            p.skipChildren();
                        }
                    }
                    if (seen != 3) {
                        throw new IOException(
                                "stored block without block_hash or tokens_hash at " + p.currentLocation());
                    }
                    blocks.add(block);
                    tokens.add(local);
                }
            } else {
                p.skipChildren();
            }
        }
        return new KvEvent.Stored(StorageTier.DEVICE, hasParent, parent, blocks.toLongArray(), tokens.toLongArray());
    }

    private static KvEvent.Removed removed(JsonParser p, JsonToken t) throws IOException {
        expect(t, JsonToken.START_OBJECT, p);
        LongArrayList hashes = new LongArrayList();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken vt = p.nextToken();
            if (name.equals("block_hashes") && vt == JsonToken.START_ARRAY) {
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    hashes.add(u64(p));
                }
            } else {
                p.skipChildren();
            }
        }
        return new KvEvent.Removed(StorageTier.DEVICE, hashes.toLongArray());
    }

    private static KvEvent retier(KvEvent e, StorageTier tier) {
        if (tier == StorageTier.DEVICE) {
            return e;
        }
        if (e instanceof KvEvent.Stored s) {
            return new KvEvent.Stored(tier, s.hasParent(), s.parentHash(), s.blockHashes(), s.tokensHashes());
        }
        if (e instanceof KvEvent.Removed r) {
            return new KvEvent.Removed(tier, r.blockHashes());
        }
        return e;
    }

    private static StorageTier tier(JsonParser p) throws IOException {
        try {
            return StorageTier.fromJsonName(p.getText());
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage() + " at " + p.currentLocation());
        }
    }

    /** An unsigned 64-bit number; values above Long.MAX_VALUE keep their bit pattern. */
    private static long u64(JsonParser p) throws IOException {
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
            throw new IOException("expected an unsigned integer at " + p.currentLocation());
        }
        if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            java.math.BigInteger b = p.getBigIntegerValue();
            if (b.signum() < 0 || b.bitLength() > 64) {
                throw new IOException("value out of u64 range at " + p.currentLocation());
            }
            return b.longValue();
        }
        long v = p.getLongValue();
        if (v < 0) {
            throw new IOException("negative value where u64 expected at " + p.currentLocation());
        }
        return v;
    }

    private static void expect(JsonToken actual, JsonToken expected, JsonParser p) throws IOException {
        if (actual != expected) {
            throw new IOException("expected " + expected + " but found " + actual + " at " + p.currentLocation());
        }
    }
}
