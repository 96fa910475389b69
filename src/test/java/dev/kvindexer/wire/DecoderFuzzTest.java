package dev.kvindexer.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.support.Mutations;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Mutated and truncated wire vectors: the decoder either succeeds or throws MalformedBatchException. */
class DecoderFuzzTest {
    private static final int ROUNDS = 40_000;

    private static List<byte[]> seeds() {
        List<byte[]> out = new ArrayList<>();
        for (String hex : List.of(
                WireVectors.A,
                WireVectors.B,
                WireVectors.C,
                WireVectors.D,
                WireVectors.F,
                WireVectors.V1,
                WireVectors.V2,
                WireVectors.V3,
                WireVectors.V4,
                WireVectors.V6,
                WireVectors.V7,
                WireVectors.V8)) {
            out.add(WireVectors.bytes(hex));
        }
        // single-event vectors wrapped in a batch [1.5, [event], 0]
        for (String hex : List.of(WireVectors.G, WireVectors.H, WireVectors.I, WireVectors.V5)) {
            byte[] ev = WireVectors.bytes(hex);
            byte[] head = WireVectors.bytes("93cb3ff800000000000091");
            byte[] batch = Arrays.copyOf(head, head.length + ev.length + 1);
            System.arraycopy(ev, 0, batch, head.length, ev.length);
            out.add(batch);
        }
        return out;
    }

    @Test
    void wrappedSingleEventsDecode() throws Exception {
        for (byte[] s : seeds()) {
            new EngineBatchDecoder(16).decode(0, s); // every seed is valid
        }
    }

    @Test
    void mutationsOnlyEverThrowMalformedBatch() {
        List<byte[]> seeds = seeds();
        SplittableRandom rnd = new SplittableRandom(0x5eed_cafeL);
        int[] blockSizes = {1, 2, 4, 16};
        EngineBatchDecoder[] decoders = new EngineBatchDecoder[blockSizes.length];
        for (int i = 0; i < decoders.length; i++) {
            decoders[i] = new EngineBatchDecoder(blockSizes[i]);
        }
        int ok = 0;
        int rejected = 0;
        for (int round = 0; round < ROUNDS; round++) {
            byte[] input = Mutations.mutate(seeds.get(rnd.nextInt(seeds.size())), rnd);
            EngineBatchDecoder d = decoders[rnd.nextInt(decoders.length)];
            try {
                EventBatch b = rnd.nextInt(8) == 0 ? d.decodeSingleEvent(round, input) : d.decode(round, input);
                checkInvariants(b);
                ok++;
            } catch (MalformedBatchException e) {
                rejected++;
            } catch (Throwable t) {
                fail("round " + round + " input " + java.util.HexFormat.of().formatHex(input), t);
            }
        }
        assertEquals(ROUNDS, ok + rejected);
        // both outcomes must actually be exercised
        if (ok < ROUNDS / 20 || rejected < ROUNDS / 20) {
            fail("unbalanced fuzz: ok=" + ok + " rejected=" + rejected);
        }
    }

    private static void checkInvariants(EventBatch b) {
        for (KvEvent e : b.events()) {
            if (e == null) {
                fail("null event");
            }
        }
        if (b.malformedEvents() < 0 || b.filteredEvents() < 0 || b.blockSizeMismatches() < 0) {
            fail("negative count");
        }
    }
}
