package dev.kvindexer.hash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * vLLM's v1 block hash against the reference's vectors (docs/protocol/hashing.md#vllm-v1-block-hash), computed by
 * running vLLM's own functions; the same as the Mooncake C++ golden fixtures where those overlap. The resource holds
 * them with the two huge inputs (VH15's tokens, VH16's LoRA name) written as a repeat count.
 */
class VllmBlockHasherTest {
    private static final HexFormat HEX = HexFormat.of();

    private static JsonObject vectors() throws IOException {
        try (InputStream in = VllmBlockHasherTest.class.getResourceAsStream("/vectors/spec11_vectors.json")) {
            return new JsonObject(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    private static HashProfile profile(String algorithm, String seed) {
        return new HashProfile(HashProfile.Algorithm.of(algorithm), seed);
    }

    private static int[] tokens(Object v) {
        if (v instanceof JsonObject repeat) {
            int[] out = new int[repeat.getInteger("times")];
            java.util.Arrays.fill(out, repeat.getInteger("repeat"));
            return out;
        }
        JsonArray a = (JsonArray) v;
        int[] out = new int[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.getInteger(i);
        }
        return out;
    }

    private static String text(Object v) {
        if (v instanceof JsonObject repeat) {
            return repeat.getString("repeat").repeat(repeat.getInteger("times"));
        }
        return (String) v;
    }

    @Test
    void everyRootOfTheTable() throws IOException {
        JsonObject roots = vectors().getJsonObject("roots");
        assertEquals(10, roots.size());
        for (String name : roots.fieldNames()) {
            String[] algorithmSeed = name.split(":", 2);
            HashProfile p = profile(algorithmSeed[0], algorithmSeed[1]);
            assertEquals(roots.getJsonObject(name).getString("root"), p.rootDigestHex(), name);
        }
    }

    @Test
    void everyChainDigestKeyAndEncodingOfTheVectors() throws Exception {
        JsonArray cases = vectors().getJsonArray("cases");
        assertEquals(17, cases.size());
        for (int c = 0; c < cases.size(); c++) {
            JsonObject v = cases.getJsonObject(c);
            String id = v.getString("id");
            HashProfile p = profile(v.getString("algorithm"), v.getString("python_hash_seed"));
            VllmBlockHasher hasher = new VllmBlockHasher(p);
            assertEquals(v.getString("root"), HEX.formatHex(p.rootDigest()), id);
            int[] tokens = tokens(v.getValue("token_ids"));
            int bs = v.getInteger("block_size");
            String lora = text(v.getValue("lora_name"));
            String salt = v.getString("cache_salt");
            VllmBlockHasher.Chain chain = hasher.chain(tokens, bs, lora, salt);
            JsonArray digests = v.getJsonArray("digests");
            JsonArray keys = v.getJsonArray("low64");
            assertEquals(digests.size(), chain.blocks(), id + ": complete blocks only");
            for (int b = 0; b < chain.blocks(); b++) {
                byte[] digest = chain.nextDigest();
                assertEquals(digests.getString(b), HEX.formatHex(digest), id + " block " + b);
                assertEquals(Long.parseUnsignedLong(keys.getString(b)), VllmBlockHasher.key(digest), id + " key " + b);
            }
            List<byte[]> extras = new ArrayList<>();
            if (lora != null && !lora.isEmpty()) {
                extras.add(lora.getBytes(StandardCharsets.UTF_8));
            }
            if (salt != null && !salt.isEmpty()) {
                extras.add(salt.getBytes(StandardCharsets.UTF_8));
            }
            byte[] encoded =
                    new VllmBlockHasher(p).encodeBlock(p.rootDigest(), tokens, 0, bs, extras.toArray(new byte[0][]));
            assertEquals(v.getInteger("block0_encoded_len"), encoded.length, id + ": encoded length");
            String expected = v.getString("block0_encoded");
            if (expected != null && !expected.isEmpty()) {
                assertEquals(expected, HEX.formatHex(encoded), id + ": encoded bytes");
            }
        }
    }

    @Test
    void theParentIsTheFullDigestNeverTheKey() throws Exception {
        HashProfile p = profile("sha256_cbor", "0");
        VllmBlockHasher.Chain chain = new VllmBlockHasher(p).chain(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4, null, null);
        byte[] block0 = chain.nextDigest();
        byte[] block1 = chain.nextDigest();
        byte[] keyAsParent = new byte[8];
        System.arraycopy(block0, 24, keyAsParent, 0, 8);
        byte[] wrong = MessageDigest.getInstance("SHA-256")
                .digest(new VllmBlockHasher(p).encodeBlock(keyAsParent, new int[] {5, 6, 7, 8}, 0, 4, new byte[0][]));
        assertEquals(
                "067bc227e5aa13cb174be22cd7016b7b21b663eddba6241928d7a7d1ffc0aa1e",
                HEX.formatHex(wrong),
                "the reference's negative control");
        assertNotEquals(HEX.formatHex(block1), HEX.formatHex(wrong));
    }

    @Test
    void seedsAsTheReferenceTakesThem() {
        assertNull(HashProfile.seedError("random"));
        assertNull(HashProfile.seedError("004294967295"), "leading zeros are allowed");
        for (String bad : new String[] {"", "-1", "+1", " 0", "0 ", "not-a-seed", "０"}) {
            assertEquals(
                    "python_hash_seed must be \"random\" or ASCII decimal text in 0..4294967295",
                    HashProfile.seedError(bad),
                    bad);
        }
        assertEquals("python_hash_seed must be in range 0..4294967295", HashProfile.seedError("4294967296"));
        assertThrows(IllegalArgumentException.class, () -> profile("sha256", "4294967296"));
        assertNotEquals(
                profile("sha256_cbor", "0").rootDigestHex(),
                profile("sha256_cbor", "00").rootDigestHex());
        assertNull(HashProfile.Algorithm.of("SHA256"), "names are case-sensitive");
    }

    @Test
    void aChainStopsWhereItsCallerStops() {
        VllmBlockHasher.Chain chain = new VllmBlockHasher(profile("sha256", "0")).chain(new int[4000], 4, "l", "s");
        chain.nextKey();
        chain.nextKey();
        assertEquals(1000, chain.blocks());
        assertEquals(2, chain.hashed());
    }

    /** The hand-written CBOR of a block is what a general CBOR writer (Jackson's) writes, head lengths and all. */
    @Test
    void blockCborIsWhatAGeneralCborWriterWrites() throws Exception {
        HashProfile p = profile("sha256_cbor", "0");
        VllmBlockHasher hasher = new VllmBlockHasher(p);
        java.util.SplittableRandom random = new java.util.SplittableRandom(3);
        int[] edges = {
            0,
            1,
            23,
            24,
            255,
            256,
            65535,
            65536,
            Integer.MAX_VALUE,
            -1,
            -24,
            -25,
            -256,
            -257,
            -65536,
            -65537,
            Integer.MIN_VALUE
        };
        com.fasterxml.jackson.dataformat.cbor.CBORFactory factory =
                new com.fasterxml.jackson.dataformat.cbor.CBORFactory();
        for (int round = 0; round < 500; round++) {
            int n = 1 + random.nextInt(40);
            int[] tokens = new int[n];
            for (int i = 0; i < n; i++) {
                tokens[i] = random.nextBoolean() ? edges[random.nextInt(edges.length)] : random.nextInt();
            }
            byte[][] extras = new byte[random.nextInt(3)][];
            for (int i = 0; i < extras.length; i++) {
                extras[i] = "é-lora-".repeat(random.nextInt(60)).getBytes(StandardCharsets.UTF_8);
            }
            byte[] parent = new byte[32];
            random.nextBytes(parent);
            java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
            try (com.fasterxml.jackson.dataformat.cbor.CBORGenerator g = factory.createGenerator(expected)) {
                g.writeStartArray(null, 3);
                g.writeBinary(parent);
                g.writeStartArray(null, n);
                for (int t : tokens) {
                    g.writeNumber(t);
                }
                g.writeEndArray();
                if (extras.length == 0) {
                    g.writeNull();
                } else {
                    g.writeStartArray(null, extras.length);
                    for (byte[] e : extras) {
                        g.writeUTF8String(e, 0, e.length);
                    }
                    g.writeEndArray();
                }
                g.writeEndArray();
            }
            assertEquals(
                    HEX.formatHex(expected.toByteArray()),
                    HEX.formatHex(hasher.encodeBlock(parent, tokens, 0, n, extras)),
                    "round " + round);
        }
    }
}
