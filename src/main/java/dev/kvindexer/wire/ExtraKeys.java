package dev.kvindexer.wire;

import dev.kvindexer.hash.BlockHasher;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The string items of a BlockStored {@code extra_keys} field
 * (docs/protocol/events.md#lora-cache-salt-and-multimodal-keys), one list per block, and
 * the two things the indexer reads from them: the Dynamo-tagged cache salt and multimodal hashes.
 * Rare on the wire, so plain collections are fine here.
 */
final class ExtraKeys {
    static final String SALT_PREFIX = "dynamo-cache-salt:";
    private static final int MM_DIGEST_LENGTH = 64;

    /** A string item; {@code bare} false for the identifier of an {@code (identifier, offset)} pair. */
    record Item(String value, boolean bare) {}

    private final List<List<Item>> blocks = new ArrayList<>();

    /** Starts the next block's item list ({@code nil} entries give an empty list). */
    List<Item> addBlock() {
        List<Item> items = new ArrayList<>(2);
        blocks.add(items);
        return items;
    }

    int blockCount() {
        return blocks.size();
    }

    /**
     * First-block string starting with the salt prefix, with a non-empty remainder. The first bare
     * item equal to the LoRA name is the LoRA itself and is passed over, so a salt equal to the
     * LoRA name still works (as in the reference).
     */
    String cacheSalt(String loraName) {
        if (blocks.isEmpty()) {
            return null;
        }
        String unmatchedLora = loraName == null || loraName.isEmpty() ? null : loraName;
        for (Item item : blocks.get(0)) {
            if (!item.bare()) {
                continue;
            }
            if (unmatchedLora != null && unmatchedLora.equals(item.value())) {
                unmatchedLora = null;
                continue;
            }
            String v = item.value();
            if (v.startsWith(SALT_PREFIX) && v.length() > SALT_PREFIX.length()) {
                return v.substring(SALT_PREFIX.length());
            }
        }
        return null;
    }

    /**
     * The block's mm hashes (unsorted), or null when it has none. A bare string is multimodal only as a vLLM digest
     * that is not the LoRA name, since bare strings also carry LoRA names and salts; the pair shape marks its
     * identifier as multimodal, so any non-empty one counts, hashed when it is no digest.
     */
    long[] mmHashes(int block, String loraName) {
        if (block >= blocks.size()) {
            return null;
        }
        long[] out = null;
        int n = 0;
        for (Item item : blocks.get(block)) {
            String v = item.value();
            long mm;
            if (isMmDigest(v)) {
                if (item.bare() && v.equals(loraName)) {
                    continue;
                }
                mm = Long.parseUnsignedLong(v.substring(0, 16), 16);
            } else if (!item.bare() && !v.isEmpty()) {
                mm = BlockHasher.hashBytes(v.getBytes(StandardCharsets.UTF_8), 0L);
            } else {
                continue;
            }
            if (out == null) {
                out = new long[blocks.get(block).size()];
            }
            out[n++] = mm;
        }
        return out == null ? null : Arrays.copyOf(out, n);
    }

    /** Exactly 64 hex characters: a vLLM multimodal digest. */
    static boolean isMmDigest(String s) {
        if (s.length() != MM_DIGEST_LENGTH) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
            if (!hex) {
                return false;
            }
        }
        return true;
    }
}
