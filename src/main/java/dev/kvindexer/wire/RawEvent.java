package dev.kvindexer.wire;

/** One event's wire fields between parsing and conversion; a scratch object reused for every event. */
final class RawEvent {
    static final int UNKNOWN = 0;
    static final int STORED = 1;
    static final int REMOVED = 2;
    static final int CLEARED = 3;
    /**
     * Mooncake's older BlockStoreEvent (docs/protocol/events.md#mooncake-store-events): one Store object, a host-pinned
     * block.
     */
    static final int STORE_OBJECT = 4;
    /** Mooncake's older BlockUpdateEvent: new replica locations of an object, nothing the index tracks. */
    static final int UPDATE_OBJECT = 5;

    int tag;
    /** A standardized KV event (keyed by event_type): a missing block_size is the partition's. */
    boolean standard;
    /** A field had a type the event format does not allow; the event is skipped and counted. */
    boolean malformed;

    /** Engine hashes; null when the field is missing or nil. Freshly allocated, handed to the event. */
    long[] blockHashes;

    boolean hasParent;
    long parentHash;
    /** A standardized event's base_block_idx is above 0: without a parent_hash its blocks cannot be placed. */
    boolean belowRoot;

    /** Token ids (flat, or flattened bigrams when {@link #eagle}); reused across events, grows as needed. */
    int[] tokens = new int[1024];

    int tokenCount;
    boolean eagle;

    boolean hasBlockSize;
    long blockSize;

    String medium;
    String loraName;
    /** Top-level {@code cache_salt} key (map events). */
    String cacheSalt;
    /** SGLang array-era {@code metadata.cache_salt} (element 7). */
    String metadataSalt;

    ExtraKeys extraKeys;

    boolean hasGroupIdx;
    long groupIdx;
    String specKind;

    void clear() {
        tag = UNKNOWN;
        standard = false;
        malformed = false;
        blockHashes = null;
        hasParent = false;
        parentHash = 0;
        belowRoot = false;
        tokenCount = 0;
        eagle = false;
        hasBlockSize = false;
        blockSize = 0;
        medium = null;
        loraName = null;
        cacheSalt = null;
        metadataSalt = null;
        extraKeys = null;
        hasGroupIdx = false;
        groupIdx = 0;
        specKind = null;
    }

    /** The token buffer with room for {@code n} tokens; contents are not preserved. */
    int[] tokenBuffer(int n) {
        if (tokens.length < n) {
            tokens = new int[Math.max(n, tokens.length * 2)];
        }
        return tokens;
    }
}
