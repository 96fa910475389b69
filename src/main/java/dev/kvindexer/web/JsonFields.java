package dev.kvindexer.web;

import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;

/**
 * How one request field is read, with the reference's wording for each refusal (serde's, as Dynamo's routes answer
 * it): the rules {@link JsonBinding} binds every request record by. Each takes the value as a parsed body holds it
 * (Integer, Long, BigInteger, Double, String, Boolean, JsonArray, JsonObject) and the field's wire name.
 */
final class JsonFields {
    private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
    private static final long U32_MAX = 0xFFFF_FFFFL;

    private JsonFields() {}

    static HttpError missing(String field) {
        return HttpError.shape("missing field `" + field + "`");
    }

    /** A string, as Rust reads one with a default, refuses null when it is sent. */
    static HttpError nullString(String field) {
        return HttpError.shape("`" + field + "`: invalid type: null, expected a string");
    }

    static String text(String field, Object v) {
        if (!(v instanceof String s)) {
            throw invalidType(field, "a string");
        }
        return s;
    }

    /** A string id, or an integer given in its place (Mooncake accepts both for instance_id). */
    static String id(String field, Object v) {
        if (v instanceof Integer || v instanceof Long || v instanceof BigInteger) {
            return Long.toUnsignedString(u64(field, v));
        }
        return text(field, v);
    }

    /** A signed 64-bit integer. */
    static long i64(String field, Object v) {
        if (v instanceof Integer || v instanceof Long) {
            return ((Number) v).longValue();
        }
        throw invalidType(field, "an integer");
    }

    static long u64(String field, Object v) {
        if (v instanceof Integer || v instanceof Long) {
            long n = ((Number) v).longValue();
            if (n < 0) {
                throw HttpError.shape("`" + field + "`: invalid value " + n + ", expected u64");
            }
            return n;
        }
        if (v instanceof BigInteger b) {
            if (b.signum() < 0 || b.compareTo(U64_MAX) > 0) {
                throw HttpError.shape("`" + field + "`: invalid value " + b + ", expected u64");
            }
            return b.longValue();
        }
        throw invalidType(field, "u64");
    }

    /** A u32 over its whole range (ids and ranks that may exceed a signed int). */
    static long u32Wide(String field, Object v) {
        long n = u64(field, v);
        if (n < 0 || n > U32_MAX) {
            throw HttpError.shape("`" + field + "`: invalid value " + Long.toUnsignedString(n) + ", expected u32");
        }
        return n;
    }

    /** A u32 that fits a non-negative int (ranks, block sizes); larger values are out of range for us. */
    static int u32(String field, Object v) {
        long n;
        if (v instanceof Integer || v instanceof Long) {
            n = ((Number) v).longValue();
        } else if (v instanceof BigInteger big) {
            n = big.signum() < 0 ? -1 : Long.MAX_VALUE;
        } else {
            throw invalidType(field, "an unsigned integer");
        }
        if (n < 0 || n > U32_MAX) {
            throw HttpError.shape("`" + field + "`: invalid value " + v + ", expected u32");
        }
        if (n > Integer.MAX_VALUE) {
            throw HttpError.shape("`" + field + "`: value " + v + " is too large");
        }
        return (int) n;
    }

    /** A value of another kind than the member's, in the words {@link Wire.Expected} gives. */
    static HttpError invalidType(String field, String expected) {
        return HttpError.shape("`" + field + "`: invalid type, expected " + expected);
    }

    static Boolean bool(String field, Object v) {
        if (!(v instanceof Boolean b)) {
            throw invalidType(field, "a boolean");
        }
        return b;
    }

    /** Any number, as a double; {@code type} is the reference's name for it ({@code f64} or {@code f32}). */
    static Double number(String field, Object v, String type) {
        if (!(v instanceof Number n)) {
            throw invalidType(field, type);
        }
        return n.doubleValue();
    }

    /** One entry of a map by rank: at most {@code maxChars} long, keyed by a u32 in decimal. */
    static void rankEntry(String field, String key, String value, int maxChars) {
        if (value.length() > maxChars) {
            throw HttpError.shape("`" + field + "." + key + "`: longer than " + maxChars + " characters");
        }
        try {
            if (Long.parseUnsignedLong(key) > U32_MAX) {
                throw new NumberFormatException();
            }
        } catch (NumberFormatException e) {
            throw HttpError.shape("`" + field + "`: invalid rank `" + key + "`, expected u32");
        }
    }

    static HttpError notAnArray(String field) {
        return invalidType(field, "an array");
    }

    static HttpError notAnObject(String field, int i) {
        return invalidType(field + "[" + i + "]", "an object");
    }

    /** One token id of an array, kept as its int bit pattern. */
    static int token(String field, int i, Object v) {
        if (!(v instanceof Integer || v instanceof Long)) {
            throw invalidType(field + "[" + i + "]", "u32");
        }
        long n = ((Number) v).longValue();
        if (n < 0 || n > U32_MAX) {
            throw HttpError.shape("`" + field + "[" + i + "]`: invalid value " + n + ", expected u32");
        }
        return (int) n;
    }

    /**
     * One 64-bit hash of an array: signed i64 as the reference sends them, unsigned values above 2^63 accepted too,
     * and with {@code decimalText} decimal strings as well (Mooncake's older drafts).
     */
    static long hash(String field, int i, Object v, boolean decimalText) {
        if (v instanceof Integer || v instanceof Long) {
            return ((Number) v).longValue();
        }
        if (v instanceof BigInteger big && big.signum() > 0 && big.compareTo(U64_MAX) <= 0) {
            return big.longValue();
        }
        if (decimalText && v instanceof String text) {
            return decimal(field, i, text.trim());
        }
        throw HttpError.shape("`" + field + "[" + i + "]`: invalid value " + shown(v) + ", expected "
                + (decimalText ? "a u64" : "i64"));
    }

    /** One element of a Dynamo {@code Vec<i64>}: a larger number is a shape error, in serde's words. */
    static long signedHash(String field, int i, Object v) {
        if (v instanceof Integer || v instanceof Long) {
            return ((Number) v).longValue();
        }
        throw HttpError.shape(field + "[" + i + "]: " + serdeUnexpected(v) + ", expected i64" + signedHint(v));
    }

    /**
     * After Dynamo's own text, for a u64 hash above 2^63 − 1: the same 64 bits as the signed i64 the route reads, as
     * engines and routers that print hashes unsigned would otherwise not know what to send.
     */
    private static String signedHint(Object v) {
        if (v instanceof BigInteger b && b.signum() > 0 && b.compareTo(U64_MAX) <= 0) {
            return " (a hash above 9223372036854775807 is sent as its signed 64-bit value: " + b.longValue() + ")";
        }
        return "";
    }

    /** What serde says of a JSON value a number type cannot take, e.g. {@code invalid type: string "1"}. */
    private static String serdeUnexpected(Object v) {
        if (v instanceof BigInteger b) {
            return "invalid value: integer `" + b + "`";
        }
        if (v instanceof Number n) {
            return "invalid type: floating point `" + n + "`";
        }
        if (v instanceof String str) {
            return "invalid type: string " + Json.encode(str.length() > 64 ? str.substring(0, 64) : str);
        }
        if (v instanceof Boolean b) {
            return "invalid type: boolean `" + b + "`";
        }
        return v == null
                ? "invalid type: null"
                : v instanceof JsonArray ? "invalid type: sequence" : "invalid type: map";
    }

    /**
     * An element as an error shows it: an array or object by its kind, since its text may be as large as the body and
     * as deep as the nesting bound.
     */
    private static String shown(Object v) {
        return v instanceof JsonArray ? "(an array)" : v instanceof JsonObject ? "(an object)" : String.valueOf(v);
    }

    private static long decimal(String field, int i, String s) {
        try {
            return s.startsWith("-") ? Long.parseLong(s) : Long.parseUnsignedLong(s);
        } catch (NumberFormatException e) {
            throw HttpError.shape("`" + field + "[" + i + "]`: invalid value \"" + s + "\", expected a u64");
        }
    }
}
