package dev.kvindexer.registry;

import dev.kvindexer.hash.BlockHasher;
import java.nio.charset.StandardCharsets;

/**
 * Maps Mooncake's string instance ids onto the index's u64 worker ids (docs/protocol/index.md#identifiers): a canonical
 * unsigned decimal is
 * that very Dynamo id, anything else gets XXH3-64 of its UTF-8 bytes with seed 0. The registry keeps the names, so
 * responses print the string back, and refuses a name whose id another name already holds.
 */
public final class InstanceIds {
    private InstanceIds() {}

    public static long of(String name) {
        return isCanonicalDecimal(name)
                ? Long.parseUnsignedLong(name)
                : BlockHasher.hashBytes(name.getBytes(StandardCharsets.UTF_8), 0L);
    }

    /** {@code 0} or {@code [1-9][0-9]*} within u64: the string form of a Dynamo id. */
    public static boolean isCanonicalDecimal(String s) {
        int n = s.length();
        if (n == 0 || n > 20 || (n > 1 && s.charAt(0) == '0')) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        try {
            Long.parseUnsignedLong(s);
            return true;
        } catch (NumberFormatException tooLarge) {
            return false;
        }
    }

    /** How an instance is named in Mooncake responses: its registered string, else its decimal id. */
    public static String display(long id, String name) {
        return name != null ? name : Long.toUnsignedString(id);
    }
}
