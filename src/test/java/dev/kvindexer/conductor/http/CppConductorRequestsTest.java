package dev.kvindexer.conductor.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.conductor.CppConductorRegistration;
import dev.kvindexer.hash.HashProfile;
import dev.kvindexer.wire.Pack;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The C++ Conductor's request checks (docs/api/mooncake-cpp.md#post-register, docs/api/mooncake-cpp.md#post-unregister, docs/protocol/index.md#conductor-context-index): the first failure, its reason, field and text. */
class CppConductorRequestsTest {
    private static byte[] pack(Object value) {
        return Pack.of(value);
    }

    private static Map<String, Object> profile() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("strategy", "vllm_v1");
        p.put("algorithm", "sha256_cbor");
        p.put("python_hash_seed", "0");
        p.put("index_projection", "low64_be");
        return p;
    }

    private static Map<String, Object> registration() {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("endpoint", "tcp://127.0.0.1:5557");
        r.put("type", "vLLM");
        r.put("modelname", "test-model");
        r.put("instance_id", "engine-a");
        r.put("block_size", 16);
        r.put("dp_rank", 0);
        r.put("hash_profile", profile());
        return r;
    }

    private static CppConductorRegistration register(Map<String, Object> body) {
        return CppConductorRequests.register(CppConductorBody.read(pack(body)));
    }

    private static void refused(
            Function<dev.kvindexer.wire.MsgpackValues.MapValue, ?> check,
            Object body,
            String reason,
            String field,
            String text) {
        CppConductorError e = assertThrows(
                CppConductorError.class,
                () -> check.apply(CppConductorBody.read(body instanceof byte[] raw ? raw : pack(body))));
        assertEquals(400, e.status());
        assertEquals(reason, e.reason(), e.getMessage());
        assertEquals(field, e.field(), e.getMessage());
        if (text != null) {
            assertEquals(text, e.getMessage());
        }
    }

    private static void registerRefused(
            Consumer<Map<String, Object>> change, String reason, String field, String text) {
        Map<String, Object> body = registration();
        change.accept(body);
        refused(CppConductorRequests::register, body, reason, field, text);
    }

    private static void profileRefused(Consumer<Map<String, Object>> change, String reason, String field) {
        Map<String, Object> p = profile();
        change.accept(p);
        registerRefused(r -> r.put("hash_profile", p), reason, field, null);
    }

    /** The newest Conductor's third type: an SGLang engine registers as a vLLM one does, with its own type kept. */
    @Test
    void anSGLangEngineIsAnEngine() {
        Map<String, Object> body = registration();
        body.put("type", "SGLang");
        CppConductorRegistration r = register(body);
        assertEquals("SGLang", r.type());
        assertTrue(r.engine());
        body.put("type", "Mooncake");
        assertFalse(register(body).engine());
    }

    @Test
    void aValidRegistrationWithItsDefaults() {
        CppConductorRegistration r = register(registration());
        assertEquals("engine-a|default|0", r.serviceKey());
        assertEquals("", r.replayEndpoint());
        assertEquals("", r.loraName());
        assertNull(r.cacheGroup());
        assertEquals(new HashProfile(HashProfile.Algorithm.SHA256_CBOR, "0"), r.profile());
        Map<String, Object> body = registration();
        body.put("tenant_id", "");
        body.put("cache_group", 0);
        assertEquals("default", register(body).tenantId());
        assertEquals(0, register(body).cacheGroup());
    }

    @Test
    void theRegisterTableOfTheReference() {
        registerRefused(r -> r.remove("block_size"), "missing", "block_size", "block_size is required");
        registerRefused(r -> r.put("tenant_id", null), "invalid_type", "tenant_id", "tenant_id must be a string");
        registerRefused(r -> r.put("instance_id", 3), "invalid_type", "instance_id", "instance_id must be a string");
        registerRefused(
                r -> r.put("additionalsalt", "s"),
                "unknown_field",
                "additionalsalt",
                "unsupported request field: additionalsalt");
        registerRefused(r -> r.remove("dp_rank"), "missing", "dp_rank", "dp_rank is required");
        registerRefused(r -> r.remove("hash_profile"), "missing", "hash_profile", "hash_profile is required");
        for (String algorithm : List.of("md5", "sha512", "xxhash", "SHA256")) {
            profileRefused(p -> p.put("algorithm", algorithm), "invalid_value", "algorithm");
        }
        profileRefused(p -> p.put("root_digest", "00"), "unknown_field", "root_digest");
        profileRefused(
                p -> {
                    p.remove("python_hash_seed");
                    p.put("python_hash_sead", "0");
                },
                "unknown_field",
                "python_hash_sead");
        List<Object> wrongTypes = new ArrayList<>(List.of(0L, true, List.of("0"), Map.of("a", "b")));
        wrongTypes.add(null);
        for (Object seed : wrongTypes) {
            profileRefused(p -> p.put("python_hash_seed", seed), "invalid_type", "python_hash_seed");
        }
        for (String seed : List.of("", "-1", "+1", " 0", "0 ", "4294967296", "not-a-seed")) {
            profileRefused(p -> p.put("python_hash_seed", seed), "invalid_value", "python_hash_seed");
        }
        registerRefused(
                r -> r.put("cache_group", 1), "unsupported", "cache_group", "only cache group zero is supported");
        registerRefused(
                r -> r.put("cache_group", List.of(0, 1)),
                "invalid_type",
                "cache_group",
                "cache_group must be an integer or null");
    }

    @Test
    void theFirstFailureInTheReferencesOrderAnswers() {
        // An unknown key wins over every missing field; a field error wins over the type check of step 8.
        registerRefused(
                r -> {
                    r.clear();
                    r.put("model", "m");
                },
                "unknown_field",
                "model",
                null);
        registerRefused(
                r -> {
                    r.put("type", "SGLang");
                    r.put("block_size", 0);
                },
                "out_of_range",
                "block_size",
                "block_size must be greater than zero");
        registerRefused(
                r -> r.put("type", "sglang"), "invalid_value", "type", "type must be vLLM, Mooncake, or SGLang");
        registerRefused(r -> r.put("endpoint", ""), "invalid_value", "endpoint", "endpoint must not be empty");
        registerRefused(
                r -> r.put("block_size", new Pack.U64(Long.MIN_VALUE)),
                "invalid_type",
                "block_size",
                "block_size must be an integer");
        registerRefused(
                r -> r.put("dp_rank", 2147483648L), "out_of_range", "dp_rank", "dp_rank must be a non-negative int");
        profileRefused(p -> p.put("strategy", "vllm_v2"), "invalid_value", "strategy");
        profileRefused(
                p -> {
                    p.put("strategy", "vllm_v2");
                    p.put("algorithm", "md5");
                },
                "invalid_value",
                "algorithm");
        profileRefused(p -> p.put("python_hash_seed", "4294967296"), "invalid_value", "python_hash_seed");
    }

    @Test
    void bodiesThatAreNoMapOfStrings() {
        refused(
                CppConductorRequests::register,
                new byte[] {(byte) 0xc1},
                "invalid_msgpack",
                null,
                "Invalid msgpack object");
        refused(
                CppConductorRequests::register,
                List.of(1),
                "invalid_msgpack",
                null,
                "request body must be a msgpack map");
        refused(
                CppConductorRequests::register,
                new byte[] {(byte) 0xdf, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff},
                "invalid_msgpack",
                null,
                "Invalid msgpack object");
        refused(
                CppConductorRequests::register,
                new byte[] {(byte) 0xd4, 0x01, 0x00},
                "invalid_msgpack",
                null,
                "request body must be a msgpack map");
        refused(
                CppConductorRequests::register,
                new byte[] {(byte) 0xc7, (byte) 0xc8, 0x01, 0x00, 0x00},
                "invalid_msgpack",
                null,
                "Invalid msgpack object");
        Map<Object, Object> numericKey = new LinkedHashMap<>();
        numericKey.put(1, "x");
        refused(CppConductorRequests::register, numericKey, "invalid_msgpack", null, "map keys must be strings");
        byte[] trailing = new byte[pack(registration()).length + 1];
        System.arraycopy(pack(registration()), 0, trailing, 0, trailing.length - 1);
        trailing[trailing.length - 1] = (byte) 0xc1;
        assertEquals(
                "engine-a",
                CppConductorRequests.register(CppConductorBody.read(trailing)).instanceId(),
                "bytes after the first value are ignored, as msgpack-c does");
    }

    @Test
    void unregisterChecks() {
        Map<String, Object> body = new LinkedHashMap<>(Map.of("instance_id", "engine-a", "dp_rank", 0));
        assertEquals(
                "engine-a|default|0",
                CppConductorRequests.unregister(CppConductorBody.read(pack(body)))
                        .serviceKey());
        refused(
                CppConductorRequests::unregister,
                Map.of("instance_id", "e"),
                "missing",
                "dp_rank",
                "dp_rank is required");
        refused(
                CppConductorRequests::unregister,
                Map.of("instance_id", "e", "dp_rank", -1),
                "invalid_value",
                "dp_rank",
                "dp_rank must be a non-negative int");
        refused(
                CppConductorRequests::unregister,
                Map.of("instance_id", "e", "dp_rank", 0, "modelname", "m"),
                "unknown_field",
                "modelname",
                null);
    }

    @Test
    void queryChecksInWireOrder() {
        Map<String, Object> q = new LinkedHashMap<>();
        q.put("model", "test-model");
        q.put("block_size", 16);
        q.put("token_ids", new byte[] {1, 0, 0, 0, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff});
        CppConductorRequests.Query query = CppConductorRequests.query(CppConductorBody.read(pack(q)));
        assertArrayEquals(new int[] {1, -1}, query.tokens(), "a bin holds little-endian int32s");
        assertEquals("default", query.tenantId());
        assertNull(query.cacheSalt());

        Map<String, Object> bad = new LinkedHashMap<>();
        bad.put("token_ids", List.of(1, 2147483648L));
        bad.put("python_hash_seed", "0");
        CppConductorError e = assertThrows(
                CppConductorError.class, () -> CppConductorRequests.query(CppConductorBody.read(pack(bad))));
        assertEquals("out_of_range", e.reason());
        assertEquals(1, e.index(), "the element at fault");
        Map<String, Object> unknownFirst = new LinkedHashMap<>();
        unknownFirst.put("python_hash_seed", "0");
        unknownFirst.put("token_ids", List.of("x"));
        refused(CppConductorRequests::query, unknownFirst, "unknown_field", "python_hash_seed", null);
        refused(
                CppConductorRequests::query,
                Map.of("model", "m", "token_ids", List.of()),
                "missing",
                "block_size",
                null);
        refused(
                CppConductorRequests::query,
                Map.of("model", "m", "block_size", 0, "token_ids", List.of()),
                "out_of_range",
                "block_size",
                "block_size must be a positive integer");
        refused(
                CppConductorRequests::query,
                Map.of("model", "m", "block_size", 4, "token_ids", new byte[3]),
                "invalid_value",
                "token_ids",
                "token_ids bin size must be a multiple of 4");
        refused(
                CppConductorRequests::query,
                Map.of("model", "m", "block_size", 4, "token_ids", "1,2"),
                "invalid_type",
                "token_ids",
                "token_ids must be a bin or an array");
        refused(
                CppConductorRequests::query,
                Map.of("model", "m", "block_size", 4, "token_ids", List.of(), "cache_salt", 1),
                "invalid_type",
                "cache_salt",
                "cache_salt must be a string or null");
        Map<String, Object> nilSalt =
                new LinkedHashMap<>(Map.of("model", "m", "block_size", 4, "token_ids", List.of()));
        nilSalt.put("cache_salt", null);
        assertNull(
                CppConductorRequests.query(CppConductorBody.read(pack(nilSalt))).cacheSalt());
        assertFalse(
                CppConductorRequests.query(CppConductorBody.read(invalidUtf8Lora()))
                        .hashable(),
                "a LoRA name that is no UTF-8 cannot be hashed: the query matches nothing");
    }

    private static byte[] invalidUtf8Lora() {
        Map<String, Object> q = new LinkedHashMap<>(Map.of("model", "m", "block_size", 4, "token_ids", List.of()));
        q.put("lora_name", new Pack.Raw(new byte[] {(byte) 0xa2, (byte) 0xc3, 0x28}));
        return pack(q);
    }
}
