package dev.kvindexer.cluster;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.PfxOptions;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.EdECPrivateKeySpec;
import java.security.spec.NamedParameterSpec;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The event bus's TLS identity, derived from the cluster's auth token. Every holder of the token derives the same
 * Ed25519 key and the same self-signed certificate, byte for byte, and that certificate is both what a node presents
 * and the only one it trusts: a bus connection in either direction needs the token, and nothing but the token has to
 * be handed out. The token itself never crosses the wire.
 *
 * <pre>
 *   seed        = HKDF-SHA256(ikm = UTF-8(token), salt = "kvindexer/eventbus-mtls/v1", info = "ed25519 key", 32 bytes)
 *   private key = seed (RFC 8032 5.1.5: an Ed25519 private key is 32 secret bytes)
 *   certificate = X.509 v3, fixed serial, names and validity, signed with that key (Ed25519 signs deterministically)
 * </pre>
 */
final class BusKeys {
    static final String ALIAS = "eventbus";
    /** How long a bus connection may take to present the token's certificate before it is closed. */
    static final int HANDSHAKE_TIMEOUT_SECONDS = 10;

    private static final byte[] SALT = "kvindexer/eventbus-mtls/v1".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] INFO = "ed25519 key".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ED25519_OID = {0x2b, 0x65, 0x70};
    private static final byte[] COMMON_NAME_OID = {0x55, 0x04, 0x03};
    private static final byte[] BASIC_CONSTRAINTS_OID = {0x55, 0x1d, 0x13};
    private static final byte[] KEY_USAGE_OID = {0x55, 0x1d, 0x0f};
    /** PKCS12 wants a password; the stores never leave the process, so it protects nothing and need not be secret. */
    private static final String STORE_PASSWORD = "kvindexer-eventbus";

    private final KeyPair keys;
    private final X509Certificate certificate;

    private BusKeys(KeyPair keys, X509Certificate certificate) {
        this.keys = keys;
        this.certificate = certificate;
    }

    static BusKeys derive(String authToken) {
        try {
            byte[] seed = hkdf(authToken.getBytes(StandardCharsets.UTF_8), SALT, INFO, 32);
            KeyPair keys = ed25519(seed);
            byte[] der = selfSigned(keys);
            X509Certificate cert = (X509Certificate)
                    CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(der));
            cert.verify(keys.getPublic());
            return new BusKeys(keys, cert);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot derive the event bus key from the auth token: " + e, e);
        }
    }

    X509Certificate certificate() {
        return certificate;
    }

    /**
     * TLS on the bus server and client, a client certificate required, key and trust as PKCS12 values. They must be
     * Pfx (or Jks, Pem) options: the clustered event bus rebuilds its server and client options from
     * {@code EventBusOptions.toJson()}, which keeps no other kind.
     */
    EventBusOptions secure(EventBusOptions bus) {
        return bus.setSsl(true)
                .setClientAuth(ClientAuth.REQUIRED)
                .setKeyCertOptions(new PfxOptions()
                        .setValue(Buffer.buffer(keyStore()))
                        .setPassword(STORE_PASSWORD)
                        .setAlias(ALIAS))
                .setTrustOptions(
                        new PfxOptions().setValue(Buffer.buffer(trustStore())).setPassword(STORE_PASSWORD))
                .setSslHandshakeTimeout(HANDSHAKE_TIMEOUT_SECONDS)
                .setSslHandshakeTimeoutUnit(TimeUnit.SECONDS);
    }

    /** The key and its certificate. */
    byte[] keyStore() {
        return store(ks -> ks.setKeyEntry(
                ALIAS, keys.getPrivate(), STORE_PASSWORD.toCharArray(), new Certificate[] {certificate}));
    }

    /** The certificate alone: the one anchor a node trusts. */
    byte[] trustStore() {
        return store(ks -> ks.setCertificateEntry(ALIAS, certificate));
    }

    static char[] storePassword() {
        return STORE_PASSWORD.toCharArray();
    }

    private interface Fill {
        void into(KeyStore ks) throws GeneralSecurityException;
    }

    private static byte[] store(Fill fill) {
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            fill.into(ks);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ks.store(out, STORE_PASSWORD.toCharArray());
            return out.toByteArray();
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot build the event bus key store: " + e, e);
        }
    }

    /**
     * The JDK derives no Ed25519 public key from a private one through a public API, but its generator takes the
     * private key as the 32 bytes it reads from the random source: fed the seed, it yields the pair. The check makes
     * a runtime that generates differently fail at startup instead of deriving another key on this node alone.
     */
    private static KeyPair ed25519(byte[] seed) throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("Ed25519");
        generator.initialize(NamedParameterSpec.ED25519, new SeedOnly(seed));
        KeyPair pair = generator.generateKeyPair();
        byte[] expected = KeyFactory.getInstance("Ed25519")
                .generatePrivate(new EdECPrivateKeySpec(NamedParameterSpec.ED25519, seed))
                .getEncoded();
        if (!Arrays.equals(expected, pair.getPrivate().getEncoded())) {
            throw new GeneralSecurityException("this runtime's Ed25519 generator does not take its key from the seed");
        }
        return pair;
    }

    private static byte[] selfSigned(KeyPair keys) throws GeneralSecurityException {
        byte[] algorithm = Der.sequence(Der.tlv(Der.OID, ED25519_OID));
        byte[] name = Der.sequence(Der.set(Der.sequence(
                Der.tlv(Der.OID, COMMON_NAME_OID),
                Der.tlv(Der.UTF8_STRING, "kvindexer event bus".getBytes(StandardCharsets.UTF_8)))));
        byte[] publicKey = keys.getPublic().getEncoded();
        // Positive and of fixed length, from the key: the same on every node, another for another token.
        byte[] serial = Arrays.copyOf(MessageDigest.getInstance("SHA-256").digest(publicKey), 16);
        serial[0] = (byte) ((serial[0] & 0x7f) | 0x40);
        byte[] validity = Der.sequence(
                Der.tlv(Der.UTC_TIME, "000101000000Z".getBytes(StandardCharsets.US_ASCII)),
                Der.tlv(Der.GENERALIZED_TIME, "99991231235959Z".getBytes(StandardCharsets.US_ASCII)));
        byte[] critical = Der.tlv(Der.BOOLEAN, new byte[] {(byte) 0xff});
        byte[] isCa = Der.sequence(
                Der.tlv(Der.OID, BASIC_CONSTRAINTS_OID),
                critical,
                Der.tlv(Der.OCTET_STRING, Der.sequence(Der.tlv(Der.BOOLEAN, new byte[] {(byte) 0xff}))));
        // digitalSignature (bit 0) and keyCertSign (bit 5): it signs handshakes and, as its own anchor, itself.
        byte[] usage = Der.sequence(
                Der.tlv(Der.OID, KEY_USAGE_OID),
                critical,
                Der.tlv(Der.OCTET_STRING, Der.tlv(Der.BIT_STRING, new byte[] {0x02, (byte) 0x84})));
        byte[] toBeSigned = Der.sequence(
                Der.explicit(0, Der.tlv(Der.INTEGER, new byte[] {2})),
                Der.tlv(Der.INTEGER, serial),
                algorithm,
                name,
                validity,
                name,
                publicKey,
                Der.explicit(3, Der.sequence(isCa, usage)));
        Signature signer = Signature.getInstance("Ed25519");
        signer.initSign(keys.getPrivate());
        signer.update(toBeSigned);
        return Der.sequence(toBeSigned, algorithm, Der.bits(signer.sign()));
    }

    /** RFC 5869. */
    static byte[] hkdf(byte[] ikm, byte[] salt, byte[] info, int length) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(salt, "HmacSHA256"));
        byte[] prk = mac.doFinal(ikm);
        mac.init(new SecretKeySpec(prk, "HmacSHA256"));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] block = new byte[0];
        for (int i = 1; out.size() < length; i++) {
            mac.update(block);
            mac.update(info);
            mac.update((byte) i);
            block = mac.doFinal();
            out.writeBytes(block);
        }
        return Arrays.copyOf(out.toByteArray(), length);
    }

    /** A random source that yields the seed once and refuses to yield anything else. */
    private static final class SeedOnly extends SecureRandom {
        private static final long serialVersionUID = 1L;
        private final byte[] seed;
        private int taken;

        SeedOnly(byte[] seed) {
            super(new byte[0]);
            this.seed = seed.clone();
        }

        @Override
        public synchronized void nextBytes(byte[] out) {
            if (seed == null || taken + out.length > seed.length) {
                throw new IllegalStateException("the key derivation asked for more than its seed");
            }
            System.arraycopy(seed, taken, out, 0, out.length);
            taken += out.length;
        }
    }
}
