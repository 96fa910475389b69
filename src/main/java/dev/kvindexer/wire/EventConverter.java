package dev.kvindexer.wire;

import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Turns a parsed {@link RawEvent} into index operations (docs/protocol/events.md#conversion-into-index-operations):
 * group filter, linkage checks,
 * tier, block-size check and tokens hashing with the event's seed (LoRA, salt), Eagle windows and
 * multimodal hashes. Appends to the batch's output and reports what happened to the event.
 */
final class EventConverter {
    enum Outcome {
        APPENDED,
        NOTHING,
        MALFORMED,
        FILTERED,
        BLOCK_SIZE_MISMATCH
    }

    /** Below this many blocks a quadratic duplicate scan beats sorting a copy. */
    private static final int SMALL_EVENT = 32;

    private final int partitionBlockSize;
    private final GroupFilter filter;
    private final String defaultLora;

    // the seed of the last (lora, salt) pair: consecutive events nearly always share it
    private String lastLora;
    private String lastSalt;
    private long lastSeed = BlockHasher.BASE_SEED;

    EventConverter(int partitionBlockSize, GroupFilter filter, String defaultLora) {
        this.partitionBlockSize = partitionBlockSize;
        this.filter = filter;
        this.defaultLora = defaultLora == null || defaultLora.isEmpty() ? null : defaultLora;
    }

    Outcome convert(RawEvent ev, List<KvEvent> out) {
        if (ev.malformed) {
            return Outcome.MALFORMED;
        }
        return switch (ev.tag) {
            case RawEvent.STORED -> stored(ev, out);
            case RawEvent.REMOVED -> removed(ev, out);
            case RawEvent.CLEARED -> {
                out.add(KvEvent.Cleared.INSTANCE);
                yield Outcome.APPENDED;
            }
            case RawEvent.STORE_OBJECT -> {
                // Our reading of docs/protocol/events.md#mooncake-store-events (it defines no medium and no root
                // marker): a Store object is a host-pinned
                // block, and a parent_block_hash of 0 means none.
                if (ev.medium == null) {
                    ev.medium = "CPU";
                }
                if (ev.hasParent && ev.parentHash == 0) {
                    ev.hasParent = false;
                }
                yield stored(ev, out);
            }
            case RawEvent.UPDATE_OBJECT -> Outcome.NOTHING; // replica locations: the index counts hits, not replicas
            default -> Outcome.MALFORMED; // unknown tag: skip only this event [REC]
        };
    }

    private Outcome stored(RawEvent ev, List<KvEvent> out) {
        if (ev.standard && !ev.hasBlockSize) {
            // The standardized envelope allows a null block_size: the registration's (the partition's) applies.
            ev.hasBlockSize = true;
            ev.blockSize = partitionBlockSize;
        }
        if (ev.standard && ev.belowRoot && !ev.hasParent) {
            return Outcome.MALFORMED; // a depth but no parent: nothing to attach the blocks to
        }
        if (ev.blockHashes == null || !ev.hasBlockSize) {
            return Outcome.MALFORMED;
        }
        if (ev.hasGroupIdx && ev.specKind != null) {
            filter.learn(ev.groupIdx, ev.specKind);
        }
        if (!GroupFilter.keep(ev.hasGroupIdx, ev.groupIdx, ev.specKind)) {
            return Outcome.FILTERED;
        }
        long[] hashes = ev.blockHashes;
        // the reference turns these into a no-op; counted as malformed because the linkage is invalid
        if (hasDuplicate(hashes) || (ev.hasParent && contains(hashes, ev.parentHash))) {
            return Outcome.MALFORMED;
        }
        StorageTier tier = StorageTier.fromMedium(ev.medium);
        if (ev.blockSize != partitionBlockSize) {
            return Outcome.BLOCK_SIZE_MISMATCH;
        }
        if (ev.standard && ev.tokenCount == 0) {
            // No token_ids: the seq_hashes place the blocks
            // (docs/protocol/events.md#standardized-events-into-index-operations).
            if (hashes.length == 0) {
                return Outcome.NOTHING;
            }
            out.add(new KvEvent.StoredBySequence(tier, ev.hasParent, ev.hasParent ? ev.parentHash : 0L, hashes));
            return Outcome.APPENDED;
        }
        int bs = partitionBlockSize;
        int window = ev.eagle ? bs + 1 : bs;
        // silent truncation: keep only the blocks whose tokens are all present
        int available = ev.tokenCount < window ? 0 : (ev.tokenCount - window) / bs + 1;
        int keep = Math.min(hashes.length, available);
        if (keep == 0) {
            return Outcome.NOTHING;
        }
        String salt = saltOf(ev);
        // An event that names no adapter belongs to the registration's (Mooncake lora_name), if any.
        String lora = ev.loraName != null ? ev.loraName : defaultLora;
        long seed = seedFor(lora, salt);
        long[] tokensHashes = new long[keep];
        int[] tokens = ev.tokens;
        for (int i = 0; i < keep; i++) {
            long[] mm = ev.extraKeys == null ? null : ev.extraKeys.mmHashes(i, ev.loraName);
            tokensHashes[i] = mm == null
                    ? BlockHasher.hashTokens(tokens, i * bs, window, seed)
                    : BlockHasher.hashTokensWithMm(tokens, i * bs, window, mm, seed);
        }
        long[] blockHashes = keep == hashes.length ? hashes : Arrays.copyOf(hashes, keep);
        out.add(new KvEvent.Stored(tier, ev.hasParent, ev.hasParent ? ev.parentHash : 0L, blockHashes, tokensHashes));
        return Outcome.APPENDED;
    }

    private Outcome removed(RawEvent ev, List<KvEvent> out) {
        if (ev.blockHashes == null) {
            return Outcome.MALFORMED;
        }
        boolean decidedNow = ev.specKind != null || !ev.hasGroupIdx;
        if (decidedNow && !GroupFilter.keep(ev.hasGroupIdx, ev.groupIdx, ev.specKind)) {
            return Outcome.FILTERED;
        }
        if (ev.blockHashes.length == 0) {
            return Outcome.NOTHING;
        }
        if (!decidedNow) {
            filter.deferRemoval(out.size(), ev.groupIdx);
        }
        out.add(new KvEvent.Removed(StorageTier.fromMedium(ev.medium), ev.blockHashes));
        return Outcome.APPENDED;
    }

    /**
     * The reference's precedence: a top-level cache_salt that is not null, even empty, then the tagged extra_keys
     * salt, then SGLang's metadata salt.
     */
    private static String saltOf(RawEvent ev) {
        if (ev.cacheSalt != null) {
            return ev.cacheSalt;
        }
        if (ev.extraKeys != null) {
            String s = ev.extraKeys.cacheSalt(ev.loraName);
            if (s != null) {
                return s;
            }
        }
        return ev.metadataSalt;
    }

    private long seedFor(String lora, String salt) {
        if (!Objects.equals(lora, lastLora) || !Objects.equals(salt, lastSalt)) {
            lastSeed = BlockHasher.seedFor(lora, salt);
            lastLora = lora;
            lastSalt = salt;
        }
        return lastSeed;
    }

    private static boolean contains(long[] a, long v) {
        for (long x : a) {
            if (x == v) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasDuplicate(long[] a) {
        if (a.length <= SMALL_EVENT) {
            for (int i = 1; i < a.length; i++) {
                for (int j = 0; j < i; j++) {
                    if (a[i] == a[j]) {
                        return true;
                    }
                }
            }
            return false;
        }
        long[] sorted = a.clone();
        Arrays.sort(sorted);
        for (int i = 1; i < sorted.length; i++) {
            if (sorted[i] == sorted[i - 1]) {
                return true;
            }
        }
        return false;
    }
}
