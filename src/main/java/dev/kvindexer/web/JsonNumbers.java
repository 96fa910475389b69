package dev.kvindexer.web;

import java.math.BigInteger;

/** Numbers as the reference services write them in JSON answers. */
public final class JsonNumbers {
    private JsonNumbers() {}

    /** A u64 held in a long: values above Long.MAX_VALUE are written as the unsigned numbers they are. */
    public static Object u64(long v) {
        return v >= 0 ? (Object) v : new BigInteger(Long.toUnsignedString(v));
    }
}
