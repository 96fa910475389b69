package dev.kvindexer.conductor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.conductor.event.CppConductorEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.HashProfile;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The C++ Conductor's registration rules and its end-to-end query vector (docs/api/mooncake-cpp.md#post-register, docs/protocol/index.md#conductor-context-index, docs/protocol/events.md#c-conductor-events). */
class CppConductorStateTest {
    private static final HashProfile PROFILE = new HashProfile(HashProfile.Algorithm.SHA256_CBOR, "0");
    /** VH2: tokens 1..48, block size 16, seed "0", sha256_cbor. */
    private static final long[] KEYS = {3236607068019569386L, 2758186210834249151L, 5191110061519319221L};

    private static final String[] DIGESTS = {
        "202da172482d928bbc42ab25b0151e2b895f13f41002e27b2ceabcfae6d332ea",
        "4a0a393805c6d2f0ed831000d41bb65980336c4c04895d5e26470bbec927f5bf",
        "7db7c8652c5c4a69d8f91e08e8decadf88d48c3339d35aad480a8718e6d0b0b5"
    };
    private static final CppConductorState.ContextKey CONTEXT =
            new CppConductorState.ContextKey("default", "test-model", "", 16);
    private static final int[] TOKENS = IntStream.rangeClosed(1, 48).toArray();

    private final CppConductorState state = new CppConductorState();

    private static CppConductorRegistration engine(String instance, int rank, String endpoint, HashProfile profile) {
        return new CppConductorRegistration(
                endpoint, "vLLM", "test-model", instance, 16, rank, profile, "", "", "default", null);
    }

    private static CppConductorRegistration store(String endpoint) {
        return new CppConductorRegistration(
                endpoint, "Mooncake", "test-model", "shared-pool", 16, 0, PROFILE, "", "", "default", null);
    }

    private static CppConductorEvent.ObjectStored object(int block, StorageTier tier) {
        return new CppConductorEvent.ObjectStored(
                "default", "test-model", "", 16, "backend-a", "obj-" + block + tier, tier, KEYS[block], DIGESTS[block]);
    }

    @Test
    void instancesAndServicesComeInTheByteOrderOfTheirIds() {
        String fullwidth = "\uFF01"; // UTF-8 EF BC 81
        String emoji = "\uD83D\uDE00"; // U+1F600, UTF-8 F0 9F 98 80: before U+FF01 in UTF-16 order
        String plain = "z";
        for (String id : List.of(emoji, fullwidth, plain)) {
            state.register(engine(id, 0, "tcp://" + id, PROFILE));
        }
        CppConductorState.Matches m = state.query(CONTEXT, null, new int[0], null);
        List<String> order = List.of(plain, fullwidth, emoji);
        for (int i = 0; i < order.size(); i++) {
            assertEquals(order.get(i), m.layout().instance(i));
            assertEquals(i, m.layout().indexOf(order.get(i)), "found where it sorts");
        }
        assertEquals(order, List.copyOf(m.instances().keySet()));
        assertEquals(
                order,
                state.services().stream()
                        .map(CppConductorRegistration::instanceId)
                        .toList());
        assertTrue(CppConductorState.BYTE_ORDER.compare("a", "ab") < 0);
        assertEquals(0, CppConductorState.BYTE_ORDER.compare(emoji, "\uD83D\uDE00"));
    }

    @Test
    void theReferencesSharedCacheResponse() {
        state.register(engine("1", 0, "tcp://e1", PROFILE));
        state.register(engine("2", 1, "tcp://e2", PROFILE));
        state.register(store("tcp://master"));
        assertNull(state.apply("1|default|0", new CppConductorEvent.GpuStored(new long[] {KEYS[0], KEYS[1]})));
        for (int b = 0; b < 3; b++) {
            assertNull(state.apply("shared-pool|default|0", object(b, StorageTier.HOST_PINNED)));
            assertNull(state.apply("shared-pool|default|0", object(b, StorageTier.DISK)));
        }
        Map<String, Map<Integer, int[]>> m =
                state.query(CONTEXT, null, TOKENS, null).instances();
        assertEquals(List.of("1", "2"), List.copyOf(m.keySet()));
        assertArrayEquals(new int[] {2, 3, 3}, m.get("1").get(0));
        assertArrayEquals(new int[] {0, 3, 3}, m.get("2").get(1));
        assertEquals(3, state.contexts().get(0).prefixCount());
        assertEquals(
                Map.of("1", List.of(0), "2", List.of(1)),
                state.contexts().get(0).instances());

        assertTrue(state.query(CONTEXT, "missing", TOKENS, null).instances().isEmpty());
        assertEquals(
                List.of("2"),
                List.copyOf(state.query(CONTEXT, "2", TOKENS, null).instances().keySet()));
        for (CppConductorState.ContextKey other : List.of(
                new CppConductorState.ContextKey("other", "test-model", "", 16),
                new CppConductorState.ContextKey("default", "missing-model", "", 16),
                new CppConductorState.ContextKey("default", "test-model", "other", 16),
                new CppConductorState.ContextKey("default", "test-model", "", 32))) {
            assertTrue(state.query(other, null, TOKENS, null).instances().isEmpty(), other.toString());
        }
        Map<Integer, int[]> salted =
                state.query(CONTEXT, "1", TOKENS, "tenant-salt").instances().get("1");
        assertArrayEquals(new int[] {0, 0, 0}, salted.get(0), "a salted query meets no unsalted block");
        assertArrayEquals(
                new int[] {0, 0, 0},
                state.query(CONTEXT, "1", new int[0], null).instances().get("1").get(0),
                "no tokens: every registered rank, zeros");
    }

    @Test
    void aRemovalMustAgreeWithTheBindingItEnds() {
        state.register(engine("1", 0, "tcp://e1", PROFILE));
        state.register(store("tcp://master"));
        String pool = "shared-pool|default|0";
        assertNull(state.apply(pool, object(0, StorageTier.HOST_PINNED)));
        String sameKeyOtherHash = "ffff" + DIGESTS[0].substring(4);
        List<CppConductorEvent.ObjectRemoved> refused = List.of(
                removal(sameKeyOtherHash, new long[0], null),
                removal(null, new long[] {KEYS[1]}, null),
                removal(null, new long[] {KEYS[0], KEYS[0]}, null),
                removal(null, new long[0], "an-adapter"));
        for (CppConductorEvent.ObjectRemoved r : refused) {
            assertTrue(state.apply(pool, r) != null, "refused: " + r);
            assertEquals(1, cpuBlocks(), "the CPU copy stays after " + r);
        }
        assertNull(state.apply(pool, removal(DIGESTS[0], new long[] {KEYS[0]}, null)), "nil LoRA is the base model");
        assertEquals(0, cpuBlocks());
    }

    private static CppConductorEvent.ObjectRemoved removal(String blockHash, long[] seqHashes, String lora) {
        return new CppConductorEvent.ObjectRemoved(
                "default",
                "test-model",
                lora,
                16L,
                "backend-a",
                "obj-0" + StorageTier.HOST_PINNED,
                StorageTier.HOST_PINNED,
                blockHash,
                seqHashes);
    }

    private int cpuBlocks() {
        return state.query(CONTEXT, "1", TOKENS, null).instances().get("1").get(0)[1];
    }

    /** An answer lists the ranks registered when it is asked: each registration and unregistration changes it. */
    @Test
    void answersFollowTheRanksAsTheyRegisterAndLeave() {
        state.register(engine("b", 3, "tcp://b3", PROFILE));
        state.register(engine("b", 0, "tcp://b0", PROFILE));
        state.register(engine("a", 7, "tcp://a7", PROFILE));
        assertNull(state.apply("b|default|3", new CppConductorEvent.GpuStored(new long[] {KEYS[0]})));
        Map<String, Map<Integer, int[]>> m =
                state.query(CONTEXT, null, TOKENS, null).instances();
        assertEquals(List.of("a", "b"), List.copyOf(m.keySet()));
        assertEquals(List.of(0, 3), List.copyOf(m.get("b").keySet()), "ranks in numeric order");
        assertArrayEquals(new int[] {1, 1, 1}, m.get("b").get(3));
        assertArrayEquals(new int[] {0, 0, 0}, m.get("b").get(0));

        state.unregister("b|default|3");
        m = state.query(CONTEXT, "b", TOKENS, null).instances();
        assertEquals(
                Map.of(0, List.of(0, 0, 0)),
                Map.of(0, IntStream.of(m.get("b").get(0)).boxed().toList()));
        assertEquals(List.of(0), List.copyOf(m.get("b").keySet()));
        state.unregister("b|default|0");
        assertTrue(state.query(CONTEXT, "b", TOKENS, null).instances().isEmpty(), "no rank left");
        assertEquals(
                List.of("a"),
                List.copyOf(state.query(CONTEXT, null, TOKENS, null).instances().keySet()));
        state.register(engine("b", 5, "tcp://b5", PROFILE));
        assertEquals(
                List.of(5),
                List.copyOf(state.query(CONTEXT, "b", TOKENS, null)
                        .instances()
                        .get("b")
                        .keySet()));
    }

    @Test
    void registrationConflictsAsTheReferenceNamesThem() {
        assertInstanceOf(CppConductorState.Added.class, state.register(engine("e", 0, "tcp://a", PROFILE)));
        assertInstanceOf(CppConductorState.Unchanged.class, state.register(engine("e", 0, "tcp://a", PROFILE)));
        assertEquals(
                new CppConductorState.Refused("conflicting registration for service key: e|default|0"),
                state.register(engine("e", 0, "tcp://b", PROFILE)));
        assertEquals(
                new CppConductorState.Refused("conflicting active registration for endpoint: tcp://a"),
                state.register(engine("f", 0, "tcp://a", PROFILE)));
        HashProfile seed1 = new HashProfile(HashProfile.Algorithm.SHA256_CBOR, "1");
        assertEquals(
                new CppConductorState.Refused(
                        "failed to register prefix context: registration conflicts with the ContextKey hash profile"),
                state.register(engine("g", 0, "tcp://g", seed1)));
        CppConductorRegistration otherStore = new CppConductorRegistration(
                "tcp://m", "Mooncake", "test-model", "pool", 16, 0, seed1, "", "", "default", null);
        assertEquals(
                new CppConductorState.Refused("failed to bind shared-cache profile: hash profile conflicts with the "
                        + "registered ContextKey profile"),
                state.register(otherStore));
        assertEquals(1, state.services().size(), "refusals changed nothing");
    }

    @Test
    void storeObjectsNeedAContextAndGoWithTheirRegistration() {
        state.register(store("tcp://master"));
        assertEquals(
                "Mooncake profile binding rejected: ContextKey is not registered",
                state.apply("shared-pool|default|0", object(0, StorageTier.HOST_PINNED)));
        state.register(engine("1", 0, "tcp://e1", PROFILE));
        assertNull(state.apply("shared-pool|default|0", object(0, StorageTier.HOST_PINNED)));
        assertArrayEquals(
                new int[] {0, 1, 1},
                state.query(CONTEXT, null, TOKENS, null).instances().get("1").get(0));
        CppConductorRegistration gone = state.unregister("shared-pool|default|0");
        assertEquals("shared-pool", gone.instanceId());
        assertArrayEquals(
                new int[] {0, 0, 0},
                state.query(CONTEXT, null, TOKENS, null).instances().get("1").get(0));
        assertNull(state.unregister("shared-pool|default|0"), "already gone");
        state.unregister("1|default|0");
        assertEquals(1, state.contexts().size(), "a context outlives its last rank");
        assertEquals(Map.of(), state.contexts().get(0).instances());
    }
}
