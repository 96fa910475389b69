package dev.kvindexer.web;

import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;

/**
 * How a request record's component is read where its Java type alone does not say (see {@link JsonBinding}). Without
 * one of these a {@code String} is a string, a {@code long} a u64, an {@code int} a u32 that fits an int, an
 * {@code int[]} u32 token ids, a {@code long[]} 64-bit hashes and a {@code JsonObject[]} objects bound one by one
 * later; each may be left out (null, or zero for a primitive).
 */
public final class Wire {
    private Wire() {}

    /** Absent or null is refused as a missing field. */
    @Retention(RetentionPolicy.RUNTIME)
    public @interface Required {}

    /** Absent reads as null, but a null sent is refused: a Rust string with a default reads it so. */
    @Retention(RetentionPolicy.RUNTIME)
    public @interface NullRefused {}

    /** On a {@code long}: any signed 64-bit integer. On a {@code long[]}: Dynamo's {@code Vec<i64>}, in serde's words. */
    @Retention(RetentionPolicy.RUNTIME)
    public @interface Signed {}

    /** On a {@code long}: a u32 over its whole range (ids and ranks that may exceed a signed int). */
    @Retention(RetentionPolicy.RUNTIME)
    public @interface U32 {}

    /** On a {@code String}: an integer taken in its place, as its unsigned decimal (Mooncake's instance ids). */
    @Retention(RetentionPolicy.RUNTIME)
    public @interface Id {}

    /** On a {@code long[]}: decimal strings accepted beside numbers (Mooncake's older drafts). */
    @Retention(RetentionPolicy.RUNTIME)
    public @interface DecimalText {}

    /**
     * Read only when none of the named members is sent (null counting as not sent): an alias the route takes after
     * them, which is then left unread, so a wrong one is not refused when it would not be used. Top-level members only.
     */
    @Retention(RetentionPolicy.RUNTIME)
    public @interface Fallback {
        String[] value();
    }
}
