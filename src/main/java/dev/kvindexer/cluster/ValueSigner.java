package dev.kvindexer.cluster;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HMAC-SHA256 under the cluster's shared auth token over what one node writes for the others. The signed bytes name
 * the kind of value and its key besides the value, so a signed value cannot be passed off under another key or as
 * another kind. Without a token nothing is signed and everything passes, as before tokens existed.
 */
final class ValueSigner {
    private static final String ALGORITHM = "HmacSHA256";
    private final SecretKeySpec key;

    ValueSigner(String authToken) {
        this.key = authToken == null ? null : new SecretKeySpec(authToken.getBytes(StandardCharsets.UTF_8), ALGORITHM);
    }

    boolean signs() {
        return key != null;
    }

    /** The hex signature of {@code canonical} stored under {@code key} in {@code domain}; null without a token. */
    String sign(String domain, String valueKey, String canonical) {
        return key == null ? null : HexFormat.of().formatHex(mac(domain, valueKey, canonical));
    }

    /** Whether {@code signature} (hex) is this token's signature of the value; compared in constant time. */
    boolean verify(String domain, String valueKey, String canonical, String signature) {
        byte[] given;
        try {
            given = HexFormat.of().parseHex(signature);
        } catch (IllegalArgumentException notHex) {
            return false;
        }
        return MessageDigest.isEqual(mac(domain, valueKey, canonical), given);
    }

    /** The raw HMAC of {@code bytes} in {@code domain}; callers check {@link #signs()} first. */
    byte[] mac(String domain, byte[] bytes) {
        Mac mac = newMac();
        lengthPrefixed(mac, utf8(domain));
        return mac.doFinal(bytes);
    }

    /** The raw HMAC of {@code bytes} stored under {@code valueKey} in {@code domain}; callers check {@link #signs()}. */
    byte[] mac(String domain, String valueKey, byte[] bytes) {
        return mac(utf8(domain), utf8(valueKey), bytes);
    }

    private byte[] mac(String domain, String valueKey, String canonical) {
        return mac(utf8(domain), utf8(valueKey), utf8(canonical));
    }

    private byte[] mac(byte[]... parts) {
        Mac mac = newMac();
        // Lengths first, so no split of the parts into others gives the same bytes.
        for (byte[] part : parts) {
            lengthPrefixed(mac, part);
        }
        return mac.doFinal();
    }

    private Mac newMac() {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    private static void lengthPrefixed(Mac mac, byte[] part) {
        mac.update(new byte[] {
            (byte) (part.length >>> 24), (byte) (part.length >>> 16), (byte) (part.length >>> 8), (byte) part.length
        });
        mac.update(part);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
