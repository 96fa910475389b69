package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The event bus identity every holder of a token derives: the same for the same token, another for another. */
class BusKeysTest {
    @Test
    void hkdfIsRfc5869() throws Exception {
        HexFormat hex = HexFormat.of();
        byte[] okm = BusKeys.hkdf(
                hex.parseHex("0b".repeat(22)),
                hex.parseHex("000102030405060708090a0b0c"),
                hex.parseHex("f0f1f2f3f4f5f6f7f8f9"),
                42);
        assertEquals(
                "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
                hex.formatHex(okm),
                "RFC 5869 test case 1");
    }

    @Test
    void theSameTokenGivesTheSameCertificateByteForByte() throws Exception {
        BusKeys one = BusKeys.derive("token-T");
        BusKeys two = BusKeys.derive("token-T");
        assertArrayEquals(one.certificate().getEncoded(), two.certificate().getEncoded());
        assertFalse(Arrays.equals(
                one.certificate().getEncoded(),
                BusKeys.derive("token-U").certificate().getEncoded()));
    }

    @Test
    void theCertificateIsItsOwnAnchor() throws Exception {
        X509Certificate cert = BusKeys.derive("token-T").certificate();
        cert.checkValidity();
        cert.verify(cert.getPublicKey());
        assertEquals("Ed25519", cert.getSigAlgName());
        assertEquals(Integer.MAX_VALUE, cert.getBasicConstraints(), "a CA, so a trust store takes it as an anchor");
        assertTrue(cert.getKeyUsage()[0] && cert.getKeyUsage()[5], "digitalSignature and keyCertSign");
    }

    @Test
    void theStoresHoldTheKeyAndTheAnchor() throws Exception {
        BusKeys keys = BusKeys.derive("token-T");
        KeyStore withKey = KeyStore.getInstance("PKCS12");
        withKey.load(new ByteArrayInputStream(keys.keyStore()), BusKeys.storePassword());
        assertTrue(withKey.isKeyEntry(BusKeys.ALIAS));
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(new ByteArrayInputStream(keys.trustStore()), BusKeys.storePassword());
        assertTrue(trust.isCertificateEntry(BusKeys.ALIAS));
        assertEquals(keys.certificate(), trust.getCertificate(BusKeys.ALIAS));
    }
}
