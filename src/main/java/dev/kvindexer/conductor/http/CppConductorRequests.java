package dev.kvindexer.conductor.http;

import dev.kvindexer.conductor.CppConductorRegistration;
import dev.kvindexer.hash.HashProfile;
import dev.kvindexer.wire.MsgpackValues;
import dev.kvindexer.wire.MsgpackValues.Entry;
import dev.kvindexer.wire.MsgpackValues.InvalidUtf8;
import dev.kvindexer.wire.MsgpackValues.MapValue;
import dev.kvindexer.wire.MsgpackValues.Nil;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Set;

/**
 * The C++ Mooncake Conductor's request contract (docs/api/mooncake-cpp.md#post-register, docs/api/mooncake-cpp.md#post-unregister, docs/protocol/index.md#conductor-context-index): which keys each route allows, each
 * field's type and range, the order in which the first failure is chosen, and the exact texts and reason codes.
 * Turns the root map of a {@link CppConductorBody} into a checked request or throws the {@link CppConductorError} the C++ answers.
 */
final class CppConductorRequests {
    private static final Set<String> REGISTER_KEYS = Set.of(
            "block_size",
            "cache_group",
            "dp_rank",
            "endpoint",
            "hash_profile",
            "instance_id",
            "lora_name",
            "modelname",
            "replay_endpoint",
            "tenant_id",
            "type");
    private static final Set<String> PROFILE_KEYS =
            Set.of("strategy", "algorithm", "python_hash_seed", "index_projection");
    private static final Set<String> UNREGISTER_KEYS = Set.of("instance_id", "dp_rank", "tenant_id");
    private static final Set<String> QUERY_KEYS =
            Set.of("model", "block_size", "token_ids", "tenant_id", "lora_name", "cache_salt", "instance_id");
    static final String DEFAULT_TENANT = "default";

    private CppConductorRequests() {}

    /** A checked {@code POST /unregister}. */
    record Unregistration(String instanceId, String tenantId, int dpRank) {
        String serviceKey() {
            return CppConductorRequests.serviceKey(instanceId, tenantId, dpRank);
        }
    }

    /**
     * A checked {@code POST /query}. {@code hashable} is false when the LoRA name or salt is not UTF-8 text, which
     * the C++ cannot hash: such a query matches nothing.
     */
    record Query(
            String model,
            long blockSize,
            int[] tokens,
            String tenantId,
            String loraName,
            String cacheSalt,
            String instanceId,
            boolean hashable) {}

    static String serviceKey(String instanceId, String tenantId, int dpRank) {
        return instanceId + "|" + tenantId + "|" + dpRank;
    }

    static CppConductorRegistration register(MapValue body) {
        allowedKeys(body, REGISTER_KEYS);
        String endpoint = requiredText(body, "endpoint");
        String type = requiredText(body, "type");
        String model = requiredText(body, "modelname");
        String instance = requiredText(body, "instance_id");
        Object size = body.get("block_size");
        if (!body.has("block_size")) {
            throw missing("block_size");
        }
        long blockSize = integer(size, "block_size");
        if (blockSize <= 0) {
            throw CppConductorError.invalid(
                    CppConductorError.OUT_OF_RANGE, "block_size must be greater than zero", "block_size");
        }
        String replay = optionalText(body, "replay_endpoint", "");
        String lora = optionalText(body, "lora_name", "");
        String tenant = optionalText(body, "tenant_id", "");
        Integer cacheGroup = cacheGroup(body);
        HashProfile profile = profile(body);
        if (!type.equals(CppConductorRegistration.ENGINE)
                && !type.equals(CppConductorRegistration.STORE)
                && !type.equals(CppConductorRegistration.SGLANG)) {
            throw CppConductorError.invalid(
                    CppConductorError.INVALID_VALUE, "type must be vLLM, Mooncake, or SGLang", "type");
        }
        if (tenant.isEmpty()) {
            tenant = DEFAULT_TENANT;
        }
        if (!body.has("dp_rank")) {
            throw missing("dp_rank");
        }
        long rank = integer(body.get("dp_rank"), "dp_rank");
        if (rank < 0 || rank > Integer.MAX_VALUE) {
            throw CppConductorError.invalid(
                    CppConductorError.OUT_OF_RANGE, "dp_rank must be a non-negative int", "dp_rank");
        }
        return new CppConductorRegistration(
                endpoint, type, model, instance, blockSize, (int) rank, profile, replay, lora, tenant, cacheGroup);
    }

    static Unregistration unregister(MapValue body) {
        allowedKeys(body, UNREGISTER_KEYS);
        String instance = requiredText(body, "instance_id");
        String tenant = optionalText(body, "tenant_id", "");
        if (tenant.isEmpty()) {
            tenant = DEFAULT_TENANT;
        }
        if (!body.has("dp_rank")) {
            throw missing("dp_rank");
        }
        Object rank = body.get("dp_rank");
        if (!(rank instanceof Long r) || r < 0 || r > Integer.MAX_VALUE) {
            throw CppConductorError.invalid(
                    CppConductorError.INVALID_VALUE, "dp_rank must be a non-negative int", "dp_rank");
        }
        return new Unregistration(instance, tenant, (int) (long) r);
    }

    static Query query(MapValue body) {
        String model = null;
        Long blockSize = null;
        int[] tokens = null;
        String tenant = "";
        String lora = "";
        String salt = null;
        String instance = null;
        boolean hashable = true;
        // Keys are checked in their wire order: the first bad one answers.
        for (Entry e : body.entries()) {
            if (!(e.key() instanceof String key)) {
                throw nonStringKey();
            }
            Object v = e.value();
            switch (key) {
                case "model" -> model = nonEmptyText(v, key);
                case "block_size" -> {
                    if (!(v instanceof Long) && !(v instanceof BigInteger)) {
                        throw invalidType(key + " must be an integer", key);
                    }
                    if (!(v instanceof Long n) || n <= 0) {
                        throw CppConductorError.invalid(
                                CppConductorError.OUT_OF_RANGE, "block_size must be a positive integer", key);
                    }
                    blockSize = n;
                }
                case "token_ids" -> tokens = tokens(v);
                case "tenant_id" -> tenant = text(v, key);
                case "lora_name" -> {
                    hashable &= !(v instanceof InvalidUtf8);
                    lora = v instanceof InvalidUtf8 ? "" : text(v, key);
                }
                case "cache_salt" -> {
                    if (v == Nil.INSTANCE) {
                        salt = null;
                    } else if (v instanceof InvalidUtf8) {
                        hashable = false;
                    } else if (v instanceof String s) {
                        salt = s.isEmpty() ? null : s;
                    } else {
                        throw invalidType("cache_salt must be a string or null", key);
                    }
                }
                case "instance_id" -> instance = text(v, key);
                default -> throw unknownField(key);
            }
        }
        if (model == null) {
            throw missing("model");
        }
        if (blockSize == null) {
            throw missing("block_size");
        }
        if (tokens == null) {
            throw missing("token_ids");
        }
        return new Query(
                model, blockSize, tokens, tenant.isEmpty() ? DEFAULT_TENANT : tenant, lora, salt, instance, hashable);
    }

    private static int[] tokens(Object v) {
        if (v instanceof MsgpackValues.Bin bin) {
            if (bin.length() % 4 != 0) {
                throw CppConductorError.invalid(
                        CppConductorError.INVALID_VALUE, "token_ids bin size must be a multiple of 4", "token_ids");
            }
            int[] out = new int[bin.length() / 4];
            ByteBuffer.wrap(bin.source(), bin.offset(), bin.length())
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .asIntBuffer()
                    .get(out);
            return out;
        }
        if (v instanceof MsgpackValues.Integers ints) {
            int[] out = new int[ints.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = token(ints.aboveLong(i) ? Long.MAX_VALUE : ints.getLong(i), i);
            }
            return out;
        }
        if (v instanceof List<?> list) {
            int[] out = new int[list.size()];
            for (int i = 0; i < out.length; i++) {
                Object t = list.get(i);
                if (!(t instanceof Long) && !(t instanceof BigInteger)) {
                    throw CppConductorError.invalidElement(
                            CppConductorError.INVALID_TYPE, "token_ids element must be an integer", "token_ids", i);
                }
                out[i] = token(t instanceof Long n ? n : Long.MAX_VALUE, i);
            }
            return out;
        }
        throw invalidType("token_ids must be a bin or an array", "token_ids");
    }

    private static int token(long n, int i) {
        if (n < Integer.MIN_VALUE || n > Integer.MAX_VALUE) {
            throw CppConductorError.invalidElement(
                    CppConductorError.OUT_OF_RANGE, "token_ids element is outside the int32 range", "token_ids", i);
        }
        return (int) n;
    }

    /** Step 2 of the register and unregister orders: every key, in wire order, must be a str the route allows. */
    private static void allowedKeys(MapValue body, Set<String> allowed) {
        for (Entry e : body.entries()) {
            if (!(e.key() instanceof String key)) {
                throw nonStringKey();
            }
            if (!allowed.contains(key)) {
                throw unknownField(key);
            }
        }
    }

    private static Integer cacheGroup(MapValue body) {
        if (!body.has("cache_group")) {
            return null;
        }
        Object v = body.get("cache_group");
        if (v == Nil.INSTANCE) {
            return null;
        }
        if (!(v instanceof Long) && !(v instanceof BigInteger)) {
            throw invalidType("cache_group must be an integer or null", "cache_group");
        }
        if (!(v instanceof Long n) || n != 0) {
            throw CppConductorError.invalid(
                    CppConductorError.UNSUPPORTED, "only cache group zero is supported", "cache_group");
        }
        return 0;
    }

    /** Step 7 of the register order (docs/api/mooncake-cpp.md#post-register, docs/protocol/hashing.md#vllm-v1-block-hash). */
    private static HashProfile profile(MapValue body) {
        if (!body.has("hash_profile")) {
            throw missing("hash_profile");
        }
        if (!(body.get("hash_profile") instanceof MapValue p)) {
            throw invalidType("hash_profile must be a map", "hash_profile");
        }
        allowedKeys(p, PROFILE_KEYS);
        String strategy = requiredText(p, "strategy");
        String algorithm = requiredText(p, "algorithm");
        String seed = p.get("python_hash_seed") instanceof InvalidUtf8 ? null : requiredText(p, "python_hash_seed");
        String projection = requiredText(p, "index_projection");
        if (HashProfile.Algorithm.of(algorithm) == null) {
            throw CppConductorError.invalid(
                    CppConductorError.INVALID_VALUE, "unsupported hash algorithm: " + algorithm, "algorithm");
        }
        if (!strategy.equals(HashProfile.STRATEGY)) {
            throw CppConductorError.invalid(
                    CppConductorError.INVALID_VALUE, "unsupported hash strategy: " + strategy, "strategy");
        }
        if (!projection.equals(HashProfile.INDEX_PROJECTION)) {
            throw CppConductorError.invalid(
                    CppConductorError.INVALID_VALUE, "unsupported index projection: " + projection, "index_projection");
        }
        String seedError = seed == null ? "python_hash_seed must contain valid UTF-8" : HashProfile.seedError(seed);
        if (seedError != null) {
            throw CppConductorError.invalid(CppConductorError.INVALID_VALUE, seedError, "python_hash_seed");
        }
        return new HashProfile(HashProfile.Algorithm.of(algorithm), seed);
    }

    /** Step 3: present, a str, not empty; in that order. */
    private static String requiredText(MapValue body, String field) {
        if (!body.has(field)) {
            throw missing(field);
        }
        return nonEmptyText(body.get(field), field);
    }

    private static String nonEmptyText(Object v, String field) {
        String s = text(v, field);
        if (s.isEmpty()) {
            throw CppConductorError.invalid(CppConductorError.INVALID_VALUE, field + " must not be empty", field);
        }
        return s;
    }

    private static String optionalText(MapValue body, String field, String absent) {
        return body.has(field) ? text(body.get(field), field) : absent;
    }

    /** A str (nil is a wrong type too); one that is not UTF-8 is refused, since nothing could log or list it. */
    private static String text(Object v, String field) {
        if (v instanceof String s) {
            return s;
        }
        if (v instanceof InvalidUtf8) {
            throw CppConductorError.invalid(
                    CppConductorError.INVALID_VALUE, field + " must contain valid UTF-8", field);
        }
        throw invalidType(field + " must be a string", field);
    }

    private static long integer(Object v, String field) {
        if (!(v instanceof Long n)) {
            throw invalidType(field + " must be an integer", field);
        }
        return n;
    }

    private static CppConductorError missing(String field) {
        return CppConductorError.invalid(CppConductorError.MISSING, field + " is required", field);
    }

    private static CppConductorError invalidType(String text, String field) {
        return CppConductorError.invalid(CppConductorError.INVALID_TYPE, text, field);
    }

    private static CppConductorError unknownField(String name) {
        return CppConductorError.invalid(CppConductorError.UNKNOWN_FIELD, "unsupported request field: " + name, name);
    }

    private static CppConductorError nonStringKey() {
        return CppConductorError.invalid(CppConductorError.INVALID_MSGPACK, "map keys must be strings", null);
    }
}
