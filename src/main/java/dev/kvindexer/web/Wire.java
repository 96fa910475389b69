package dev.kvindexer.web;

import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;

/**
 * How a request record's component is read where its Java type alone does not say (see {@link JsonBinding}). Without
 * one of these a {@code String} is a string, a {@code long} a u64, an {@code int} a u32 that fits an int, an
 * {@code int[]} u32 token ids, a {@code long[]} 64-bit hashes, a {@code Boolean} a boolean, a {@code Double} any
 * number and a {@code JsonObject[]} objects the route binds one by one; each may be left out (null, or zero for a
 * primitive). A {@code List} or {@code Map} of these reads each element by the same rule, named by the member (and a
 * map's key), and refuses a null element.
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
     * Read only when none of the named members of the same object is sent (null counting as not sent): an alias the
     * route takes after them, which is then left unread, so a wrong one is not refused when it would not be used.
     */
    @Retention(RetentionPolicy.RUNTIME)
    public @interface Fallback {
        String[] value();
    }

    /**
     * On a record, {@code List} or {@code Map} component: the words a value of another kind is refused with, e.g.
     * {@code "a struct"} gives {@code `member`: invalid type, expected a struct}.
     */
    @Retention(RetentionPolicy.RUNTIME)
    public @interface Expected {
        String value();
    }

    /**
     * A value of another kind than the component's (an object for a record or map, an array for a list or array) reads
     * as absent, unchecked; in a list, such an element reads as null. For members read only when they fit.
     */
    @Retention(RetentionPolicy.RUNTIME)
    public @interface Lenient {}

    /** On a {@code Double} or a map of them: a number the reference holds as f32, so named in refusals. */
    @Retention(RetentionPolicy.RUNTIME)
    public @interface F32 {}

    /**
     * On a {@code Map<String, String>}: keyed by rank, a u32 as a decimal string, each value at most {@code maxChars}
     * long.
     */
    @Retention(RetentionPolicy.RUNTIME)
    public @interface Ranks {
        int maxChars() default Integer.MAX_VALUE;
    }
}
