package dev.kvindexer.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HexFormat;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The encoder reproduces docs/protocol/events.md#wire-test-vectors vectors byte for byte. */
class BatchEncoderTest {
    private static final int[] TOKENS_1_32 = IntStream.rangeClosed(1, 32).toArray();
    private static final List<EngineEvent> STANDARD = List.of(
            new EngineEvent.Store(new long[] {1, 2}, null, TOKENS_1_32, 16, "GPU", null),
            new EngineEvent.Remove(new long[] {2}, "GPU"),
            new EngineEvent.ClearAll());

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }

    @Test
    void vectorA_vllmMapEra() {
        assertEquals(
                "93cb3ff80000000000009388a474797065ab426c6f636b53746f726564ac626c6f636b5f686173686573920102b1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20aa626c6f636b5f73697a6510a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c083a474797065ac426c6f636b52656d6f766564ac626c6f636b5f6861736865739102a66d656469756da347505581a474797065b0416c6c426c6f636b73436c656172656400",
                hex(BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, 1.5, STANDARD, 0)));
    }

    @Test
    void vectorC_arrayEra() {
        String c =
                "93cb3ff80000000000009397ab426c6f636b53746f726564920102c0dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2010c0a347505593ac426c6f636b52656d6f7665649102a347505591b0416c6c426c6f636b73436c656172656400";
        assertEquals(c, hex(BatchEncoder.batch(BatchEncoder.Format.VLLM_ARRAY, 1.5, STANDARD, 0)));
        assertEquals(c, hex(BatchEncoder.batch(BatchEncoder.Format.SGLANG_ARRAY, 1.5, STANDARD, 0)));
    }

    @Test
    void vectorV6_largeUnsignedHashes() {
        long h1 = Long.parseUnsignedLong("15760518052499183552");
        long h2 = 2451106649480522483L;
        assertEquals(
                "93cb3ff80000000000009188a474797065ab426c6f636b53746f726564ac626c6f636b5f68617368657392cfdab89baa7b5857c0cf22041482dce26af3b1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473980001020304050607aa626c6f636b5f73697a6504a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c000",
                hex(BatchEncoder.batch(
                        BatchEncoder.Format.VLLM_MAP,
                        1.5,
                        List.of(new EngineEvent.Store(
                                new long[] {h1, h2}, null, IntStream.range(0, 8).toArray(), 4, "GPU", null)),
                        0)));
        assertEquals(
                "93cb3ff999999999999a9183a474797065ac426c6f636b52656d6f766564ac626c6f636b5f68617368657391cf22041482dce26af3a66d656469756da347505500",
                hex(BatchEncoder.batch(
                        BatchEncoder.Format.VLLM_MAP,
                        1.6,
                        List.of(new EngineEvent.Remove(new long[] {h2}, "GPU")),
                        0)));
    }

    @Test
    void vectorV1_sglangSignedHashes() {
        assertEquals(
                "93cb3ff80000000000009197ab426c6f636b53746f72656492d3ea06fc71a5ee6e88fec098000102030405060704c0aa4350555f50494e4e454401",
                hex(BatchEncoder.batch(
                        BatchEncoder.Format.SGLANG_ARRAY,
                        1.5,
                        List.of(new EngineEvent.Store(
                                new long[] {-1583300653928780152L, -2L},
                                null,
                                IntStream.range(0, 8).toArray(),
                                4,
                                "CPU_PINNED",
                                null)),
                        1)));
    }
}
