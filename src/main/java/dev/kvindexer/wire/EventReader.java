package dev.kvindexer.wire;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.msgpack.value.ValueType;

/**
 * Parses one engine event, tagged array or tagged map (docs/protocol/events.md#event-shape), into a {@link RawEvent}.
 * Every field read consumes exactly one msgpack value even when its type is wrong, so a bad field
 * only marks the event malformed and the batch stays in step; structural damage throws.
 */
final class EventReader {
    private static final int F_SKIP = 0;
    private static final int F_TYPE = 1;
    private static final int F_HASHES = 2;
    private static final int F_PARENT = 3;
    private static final int F_TOKENS = 4;
    private static final int F_BLOCK_SIZE = 5;
    private static final int F_MEDIUM = 6;
    private static final int F_LORA_NAME = 7;
    private static final int F_EXTRA_KEYS = 8;
    private static final int F_GROUP_IDX = 9;
    private static final int F_KIND = 10;
    private static final int F_CACHE_SALT = 11;
    /** Array element 7 of BlockStored: lora_name (str/nil) or SGLang metadata (map). */
    private static final int F_LORA_OR_METADATA = 12;
    /** BlockStored elements 9–11, BlockRemoved 3–4: typed by sniffing, as the reference does. */
    private static final int F_SNIFFED = 13;
    /**
     * A standardized KV event's {@code event_type} (docs/protocol/events.md#standardized-kv-events): {@code stored},
     * {@code removed}, {@code cleared}.
     */
    private static final int F_EVENT_TYPE = 14;
    /** One block hash in place of an array (Mooncake's older {@code block_hash}). */
    private static final int F_ONE_HASH = 15;
    /** A standardized stored event's {@code base_block_idx}: the depth of its first block. */
    private static final int F_BASE_INDEX = 16;

    /**
     * Map keys; index i maps to MAP_FIELDS[i]. Keys not listed (lora_id, locality, ...) are skipped. event_type,
     * seq_hashes, parent_hash and base_block_idx are the standardized envelope's
     * (docs/protocol/events.md#standardized-events-into-index-operations); its event_id, backend_id and dp_rank are
     * skipped: inside a ZMQ
     * batch the batch seq orders and the registration names the owner. Its additional_salt is skipped too, as a
     * registration's is (docs/api/mooncake-json.md#salts).
     */
    private static final byte[][] MAP_KEYS = utf8(
            "type",
            "block_hashes",
            "parent_block_hash",
            "token_ids",
            "block_size",
            "medium",
            "lora_name",
            "extra_keys",
            "group_idx",
            "kv_cache_spec_kind",
            "cache_salt",
            "event_type",
            "seq_hashes",
            "parent_hash",
            "block_hash",
            "token_id",
            "base_block_idx");

    private static final int[] MAP_FIELDS = {
        F_TYPE,
        F_HASHES,
        F_PARENT,
        F_TOKENS,
        F_BLOCK_SIZE,
        F_MEDIUM,
        F_LORA_NAME,
        F_EXTRA_KEYS,
        F_GROUP_IDX,
        F_KIND,
        F_CACHE_SALT,
        F_EVENT_TYPE,
        F_HASHES,
        F_PARENT,
        F_ONE_HASH,
        F_TOKENS,
        F_BASE_INDEX
    };

    /**
     * Positional layouts after the tag (docs/protocol/events.md#blockstored, docs/protocol/events.md#blockremoved);
     * index 0 here is array element 1.
     */
    private static final int[] STORED_LAYOUT = {
        F_HASHES,
        F_PARENT,
        F_TOKENS,
        F_BLOCK_SIZE,
        F_SKIP,
        F_MEDIUM,
        F_LORA_OR_METADATA,
        F_EXTRA_KEYS,
        F_SNIFFED,
        F_SNIFFED,
        F_SNIFFED
    };

    private static final int[] REMOVED_LAYOUT = {F_HASHES, F_MEDIUM, F_SNIFFED, F_SNIFFED};
    private static final int[] CLEARED_LAYOUT = {};
    /**
     * Mooncake's older BlockStoreEvent, positionally in the documented order (this project's reading,
     * docs/protocol/events.md#mooncake-store-events): ts, mooncake_key,
     * addr_list, block_hash, parent_block_hash, token_id, block_size, model_name, lora_name, lora_id.
     */
    private static final int[] STORE_OBJECT_LAYOUT = {
        F_SKIP, F_SKIP, F_SKIP, F_ONE_HASH, F_PARENT, F_TOKENS, F_BLOCK_SIZE, F_SKIP, F_LORA_NAME, F_SKIP
    };

    private static final byte[][] TAGS = utf8(
            "BlockStored", "BlockRemoved", "AllBlocksCleared", "BlockStoreEvent", "BlockUpdateEvent", "RemoveAllEvent");
    private static final int[] TAG_IDS = {
        RawEvent.STORED,
        RawEvent.REMOVED,
        RawEvent.CLEARED,
        RawEvent.STORE_OBJECT,
        RawEvent.UPDATE_OBJECT,
        RawEvent.CLEARED
    };
    private static final byte[][] EVENT_TYPES = utf8("stored", "removed", "cleared");

    private static final byte[][] METADATA_KEYS = utf8("cache_salt");

    private final WireReader in;
    /** Whether the current array event already got its sniffed group_idx (a second int is the window). */
    private boolean sniffedGroup;

    EventReader(WireReader in) {
        this.in = in;
    }

    /** Reads the next value as an event into {@code ev} (cleared first). */
    void read(RawEvent ev) throws IOException {
        ev.clear();
        sniffedGroup = false;
        ValueType t = in.peekType();
        if (t == ValueType.ARRAY) {
            readArray(ev);
        } else if (t == ValueType.MAP) {
            readMap(ev);
        } else {
            in.skip();
            ev.malformed = true;
        }
    }

    private void readArray(RawEvent ev) throws IOException {
        int n = in.arrayHeader();
        if (n == 0) {
            ev.malformed = true;
            return;
        }
        ev.tag = readTag();
        int[] layout = switch (ev.tag) {
            case RawEvent.STORED -> STORED_LAYOUT;
            case RawEvent.REMOVED -> REMOVED_LAYOUT;
            case RawEvent.CLEARED -> CLEARED_LAYOUT;
            case RawEvent.STORE_OBJECT -> STORE_OBJECT_LAYOUT;
            default -> null;
        };
        if (layout == null) {
            in.skip(n - 1);
            return;
        }
        for (int i = 1; i < n; i++) {
            // elements past the known layout (future fields) are ignored
            readField(i - 1 < layout.length ? layout[i - 1] : F_SKIP, ev);
        }
    }

    private void readMap(RawEvent ev) throws IOException {
        int n = in.mapHeader();
        for (int i = 0; i < n; i++) {
            if (in.peekType() != ValueType.STRING) {
                in.skip(2);
                continue;
            }
            int k = in.matchString(MAP_KEYS);
            readField(k < 0 ? F_SKIP : MAP_FIELDS[k], ev);
        }
    }

    private int readTag() throws IOException {
        if (in.peekType() != ValueType.STRING) {
            in.skip();
            return RawEvent.UNKNOWN;
        }
        int k = in.matchString(TAGS);
        return k < 0 ? RawEvent.UNKNOWN : TAG_IDS[k];
    }

    private void readField(int field, RawEvent ev) throws IOException {
        switch (field) {
            case F_TYPE -> ev.tag = readTag();
            case F_EVENT_TYPE -> readEventType(ev);
            case F_HASHES -> readHashes(ev);
            case F_ONE_HASH -> readOneHash(ev);
            case F_PARENT -> readParent(ev);
            case F_TOKENS -> readTokens(ev);
            case F_BLOCK_SIZE -> readBlockSize(ev);
            case F_BASE_INDEX -> readBaseIndex(ev);
            case F_MEDIUM -> ev.medium = optionalString(ev);
            case F_LORA_NAME -> ev.loraName = optionalString(ev);
            case F_LORA_OR_METADATA -> {
                if (in.peekType() == ValueType.MAP) {
                    readMetadata(ev);
                } else {
                    ev.loraName = optionalString(ev);
                }
            }
            case F_EXTRA_KEYS -> readExtraKeys(ev);
            case F_GROUP_IDX -> readGroupIdx(ev);
            case F_KIND -> ev.specKind = optionalString(ev);
            case F_CACHE_SALT -> ev.cacheSalt = optionalString(ev);
            case F_SNIFFED -> readSniffed(ev);
            default -> in.skip();
        }
    }

    private void readEventType(RawEvent ev) throws IOException {
        ev.standard = true;
        if (in.peekType() != ValueType.STRING) {
            in.skip();
            ev.tag = RawEvent.UNKNOWN;
        } else {
            int k = in.matchString(EVENT_TYPES);
            ev.tag = k < 0 ? RawEvent.UNKNOWN : TAG_IDS[k];
        }
    }

    private void readOneHash(RawEvent ev) throws IOException {
        if (WireReader.isHash(in.peekType())) {
            ev.blockHashes = new long[] {in.hash()};
        } else {
            in.skip();
            ev.malformed = true;
        }
    }

    private void readBaseIndex(RawEvent ev) throws IOException {
        if (in.tryNil()) {
            return;
        }
        if (in.peekType() == ValueType.INTEGER) {
            ev.belowRoot = in.integerBits() != 0;
        } else {
            in.skip();
            ev.malformed = true;
        }
    }

    private void readHashes(RawEvent ev) throws IOException {
        if (in.tryNil()) {
            return;
        }
        if (in.peekType() != ValueType.ARRAY) {
            in.skip();
            ev.malformed = true;
            return;
        }
        int n = in.arrayHeader();
        long[] hashes = new long[n];
        for (int i = 0; i < n; i++) {
            if (WireReader.isHash(in.peekType())) {
                hashes[i] = in.hash();
            } else {
                in.skip();
                ev.malformed = true;
            }
        }
        ev.blockHashes = hashes;
    }

    private void readParent(RawEvent ev) throws IOException {
        if (in.tryNil()) {
            return;
        }
        if (WireReader.isHash(in.peekType())) {
            ev.hasParent = true;
            ev.parentHash = in.hash();
        } else {
            in.skip();
            ev.malformed = true;
        }
    }

    /** Flat token ids, or bigram pairs flattened to {@code [t0, t1, ..., tn]} (docs/protocol/events.md#token_ids). */
    private void readTokens(RawEvent ev) throws IOException {
        if (in.tryNil()) {
            return;
        }
        if (in.peekType() != ValueType.ARRAY) {
            in.skip();
            ev.malformed = true;
            return;
        }
        int n = in.arrayHeader();
        if (n == 0) {
            return;
        }
        if (in.peekType() == ValueType.ARRAY) {
            readBigrams(ev, n);
            return;
        }
        int[] tokens = ev.tokenBuffer(n);
        if (!in.u32Values(tokens, n)) {
            for (int i = 0; i < n; i++) {
                tokens[i] = tokenOrFlag(ev);
            }
        }
        ev.tokenCount = n;
    }

    private void readBigrams(RawEvent ev, int pairs) throws IOException {
        int[] tokens = ev.tokenBuffer(pairs + 1);
        for (int i = 0; i < pairs; i++) {
            if (in.peekType() != ValueType.ARRAY) {
                in.skip();
                ev.malformed = true;
                continue;
            }
            int len = in.arrayHeader();
            if (len != 2) {
                in.skip(len);
                ev.malformed = true;
                continue;
            }
            tokens[i] = tokenOrFlag(ev);
            int second = tokenOrFlag(ev);
            if (i == pairs - 1) {
                tokens[pairs] = second;
            }
        }
        ev.tokenCount = pairs + 1;
        ev.eagle = true;
    }

    /** A u32 token id as an int bit pattern; anything else marks the event malformed. */
    private int tokenOrFlag(RawEvent ev) throws IOException {
        if (in.peekType() != ValueType.INTEGER) {
            in.skip();
            ev.malformed = true;
            return 0;
        }
        long v = in.integerBits(); // uint64 ≥ 2^63 comes back negative and is rejected too
        if (v < 0 || v > 0xFFFF_FFFFL) {
            ev.malformed = true;
            return 0;
        }
        return (int) v;
    }

    private void readBlockSize(RawEvent ev) throws IOException {
        if (in.tryNil()) {
            return;
        }
        if (in.peekType() != ValueType.INTEGER) {
            in.skip();
            ev.malformed = true;
            return;
        }
        // any integer: a value that cannot be the partition's counts as a block-size mismatch later
        ev.hasBlockSize = true;
        ev.blockSize = in.integerBits();
    }

    private void readGroupIdx(RawEvent ev) throws IOException {
        if (in.tryNil()) {
            return;
        }
        if (in.peekType() != ValueType.INTEGER) {
            in.skip();
            ev.malformed = true;
            return;
        }
        setGroupIdx(ev, in.integerBits());
    }

    private static void setGroupIdx(RawEvent ev, long v) {
        // group_idx is a u32 in the reference
        if (v < 0 || v > 0xFFFF_FFFFL) {
            ev.malformed = true;
            return;
        }
        ev.hasGroupIdx = true;
        ev.groupIdx = v;
    }

    /**
     * Trailing array elements (BlockStored 9–11, BlockRemoved 3–4): an int is group_idx (then the
     * sliding window), a string is kv_cache_spec_kind, anything else (Dynamo's own mm infos, future
     * fields) is ignored.
     */
    private void readSniffed(RawEvent ev) throws IOException {
        ValueType t = in.peekType();
        if (t == ValueType.INTEGER) {
            long v = in.integerBits();
            if (!sniffedGroup) {
                sniffedGroup = true;
                setGroupIdx(ev, v);
            }
        } else if (t == ValueType.STRING) {
            ev.specKind = in.string();
        } else {
            in.skip();
        }
    }

    /** SGLang {@code metadata = {"cache_salt": str}}; other keys ignored. */
    private void readMetadata(RawEvent ev) throws IOException {
        int n = in.mapHeader();
        for (int i = 0; i < n; i++) {
            if (in.peekType() != ValueType.STRING) {
                in.skip(2);
            } else if (in.matchString(METADATA_KEYS) == 0) {
                ev.metadataSalt = optionalString(ev);
            } else {
                in.skip();
            }
        }
    }

    /**
     * {@code extra_keys}: nil, or one entry per block, each nil or a list of items. String items and the identifier of
     * {@code [identifier, offset]} pairs are kept; other shapes are ignored, where the reference drops the whole batch.
     */
    private void readExtraKeys(RawEvent ev) throws IOException {
        if (in.tryNil()) {
            return;
        }
        if (in.peekType() != ValueType.ARRAY) {
            in.skip();
            return;
        }
        int blocks = in.arrayHeader();
        ExtraKeys keys = new ExtraKeys();
        for (int b = 0; b < blocks; b++) {
            List<ExtraKeys.Item> items = keys.addBlock();
            if (in.peekType() != ValueType.ARRAY) {
                in.skip();
                continue;
            }
            int n = in.arrayHeader();
            for (int i = 0; i < n; i++) {
                readExtraKeyItem(items);
            }
        }
        ev.extraKeys = keys;
    }

    private void readExtraKeyItem(List<ExtraKeys.Item> items) throws IOException {
        ValueType t = in.peekType();
        if (t == ValueType.STRING) {
            items.add(new ExtraKeys.Item(in.string(), true));
        } else if (t == ValueType.ARRAY) {
            int len = in.arrayHeader();
            if (len == 2 && in.peekType() == ValueType.STRING) {
                String identifier = in.string();
                if (in.peekType() == ValueType.INTEGER) {
                    items.add(new ExtraKeys.Item(identifier, false));
                }
                in.skip();
            } else {
                in.skip(len);
            }
        } else {
            in.skip();
        }
    }

    private String optionalString(RawEvent ev) throws IOException {
        if (in.tryNil()) {
            return null;
        }
        if (in.peekType() != ValueType.STRING) {
            in.skip();
            ev.malformed = true;
            return null;
        }
        return in.string();
    }

    private static byte[][] utf8(String... keys) {
        byte[][] out = new byte[keys.length][];
        for (int i = 0; i < keys.length; i++) {
            out[i] = keys[i].getBytes(StandardCharsets.UTF_8);
        }
        return out;
    }
}
