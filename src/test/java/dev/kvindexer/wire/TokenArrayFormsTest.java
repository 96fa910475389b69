package dev.kvindexer.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.hash.BlockHasher;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Token ids in every msgpack form an engine might use. The ones engines send (fixint, uint8/16/32) are read straight
 * from the payload; any other form sends the whole array through msgpack-java value by value. Both must give the
 * same tokens, and the same malformed verdicts, whatever the mix and wherever the odd element sits.
 */
class TokenArrayFormsTest {
    private static final int BLOCK = 4;
    private static final long SEED = 1337;

    /** One token written in a given form, with the value the decoder must read or null for "malformed". */
    private record Form(String name, Object packed, Long value) {}

    private static Form fixint(int v) {
        return new Form("fixint", new Pack.Raw(new byte[] {(byte) v}), (long) v);
    }

    private static Form raw(String name, Long value, int... bytes) {
        byte[] b = new byte[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            b[i] = (byte) bytes[i];
        }
        return new Form(name, new Pack.Raw(b), value);
    }

    private static final List<Form> FAST = List.of(
            fixint(0), fixint(0x7f),
            raw("uint8", 0x80L, 0xcc, 0x80), raw("uint8 small", 5L, 0xcc, 0x05),
            raw("uint16", 0xbeefL, 0xcd, 0xbe, 0xef), raw("uint16 small", 7L, 0xcd, 0x00, 0x07),
            raw("uint32", 0xdeadbeefL, 0xce, 0xde, 0xad, 0xbe, 0xef),
                    raw("uint32 max", 0xffffffffL, 0xce, 0xff, 0xff, 0xff, 0xff));

    private static final List<Form> SLOW = List.of(
            raw("uint64 small", 9L, 0xcf, 0, 0, 0, 0, 0, 0, 0, 9),
            raw("uint64 over u32", null, 0xcf, 0, 0, 0, 1, 0, 0, 0, 0),
            raw("uint64 top bit", null, 0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0),
            raw("int8", 5L, 0xd0, 0x05),
            raw("int16", 300L, 0xd1, 0x01, 0x2c),
            raw("int32", 70000L, 0xd2, 0x00, 0x01, 0x11, 0x70),
            raw("int64", 11L, 0xd3, 0, 0, 0, 0, 0, 0, 0, 11),
            raw("negative fixint", null, 0xff),
            raw("int8 negative", null, 0xd0, 0xfe),
            raw("float64", null, 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0),
            raw("string", null, 0xa1, 0x31),
            raw("nil", null, 0xc0),
            raw("true", null, 0xc3));

    private static final List<Form> ALL = concat(FAST, SLOW);

    private static List<Form> concat(List<Form> a, List<Form> b) {
        List<Form> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** Decodes one stored event whose token_ids are the given forms; block hashes follow the token count. */
    private static EventBatch decode(List<Form> tokens) throws MalformedBatchException {
        int blocks = Math.max(1, tokens.size() / BLOCK);
        List<Object> hashes = new ArrayList<>();
        for (int i = 0; i < blocks; i++) {
            hashes.add(100L + i);
        }
        Map<String, Object> ev = new LinkedHashMap<>();
        ev.put("type", "BlockStored");
        ev.put("block_hashes", hashes);
        ev.put("parent_block_hash", null);
        ev.put("token_ids", tokens.stream().map(Form::packed).toList());
        ev.put("block_size", BLOCK);
        ev.put("lora_id", null);
        ev.put("medium", "GPU");
        return new EngineBatchDecoder(BLOCK).decode(1, Pack.batch(0, ev));
    }

    private static void assertDecodes(List<Form> tokens) throws MalformedBatchException {
        EventBatch b = decode(tokens);
        String names = tokens.stream().map(Form::name).toList().toString();
        if (tokens.stream().anyMatch(f -> f.value() == null)) {
            assertEquals(1, b.malformedEvents(), "an odd token marks the event malformed: " + names);
            assertTrue(b.events().isEmpty(), names);
            return;
        }
        assertEquals(0, b.malformedEvents(), names);
        int[] expected = tokens.stream().mapToInt(f -> (int) (long) f.value()).toArray();
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, b.events().get(0), names);
        assertArrayEquals(BlockHasher.localHashes(expected, BLOCK, SEED), s.tokensHashes(), names);
    }

    @Test
    void everyFormAloneAndAtEveryPositionOfABlock() throws Exception {
        for (Form odd : ALL) {
            for (int at = 0; at < BLOCK * 2; at++) {
                List<Form> tokens = new ArrayList<>(Arrays.asList(
                        fixint(1), fixint(2), fixint(3), fixint(4), fixint(5), fixint(6), fixint(7), fixint(8)));
                tokens.set(at, odd);
                assertDecodes(tokens);
            }
        }
    }

    @Test
    void randomMixesOfForms() throws Exception {
        SplittableRandom rnd = new SplittableRandom(7);
        for (int round = 0; round < 2000; round++) {
            int n = BLOCK * (1 + rnd.nextInt(6));
            // Most rounds use only the direct forms, so the direct read is exercised on long arrays too.
            List<Form> pool = round % 3 == 0 ? ALL : FAST;
            List<Form> tokens = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                tokens.add(pool.get(rnd.nextInt(pool.size())));
            }
            assertDecodes(tokens);
        }
    }

    @Test
    void anArrayCutShortIsAMalformedBatchWhateverTheForms() {
        for (Form f : FAST) {
            Map<String, Object> ev = new LinkedHashMap<>();
            ev.put("type", "BlockStored");
            ev.put("block_hashes", List.of(1L));
            ev.put("parent_block_hash", null);
            ev.put("token_ids", List.of(f.packed(), f.packed(), f.packed(), f.packed()));
            // A batch without the rank element, so the token array is the frame's last bytes.
            byte[] whole = Pack.of(List.of(1.5, List.of(ev)));
            // Cut inside the last token: the array promises more than the frame holds.
            byte[] cut = Arrays.copyOf(whole, whole.length - 1);
            org.junit.jupiter.api.Assertions.assertThrows(
                    MalformedBatchException.class, () -> new EngineBatchDecoder(BLOCK).decode(1, cut), f.name());
        }
    }
}
