package dev.kvindexer.selectservice.replication;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.load.LoadEvent;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The replica-sync vectors of docs/api/selection.md#replica-sync, both ways, and hostile payloads refused without allocating. */
class ReplicaEventCodecTest {
    private static final PartitionKey P = new PartitionKey("model", "default");
    private static final String FREE =
            "84aa6d6f64656c5f6e616d65a56d6f64656cad726f7574696e675f67726f7570a764656661756c74"
                    + "aa626c6f636b5f73697a6504a56576656e7485aa726571756573745f6964a27231a6776f726b657282a9776f726b65725f6964"
                    + "01a764705f72616e6b00a464617461a446726565a9726f757465725f69642aa96c6f72615f6e616d65c0";
    private static final String ADD = "84aa6d6f64656c5f6e616d65a56d6f64656cad726f7574696e675f67726f7570a764656661756c74"
            + "aa626c6f636b5f73697a6504a56576656e7485aa726571756573745f6964a27231a6776f726b657282a9776f726b65725f6964"
            + "01a764705f72616e6b00a46461746181aa4164645265717565737484ae746f6b656e5f73657175656e63659107b4747261636b"
            + "5f70726566696c6c5f746f6b656e73c3b665787065637465645f6f75747075745f746f6b656e73c0b170726566696c6c5f6c6f"
            + "61645f68696e7482d920696e697469616c5f6566666563746976655f70726566696c6c5f746f6b656e7304b965787065637465"
            + "645f70726566696c6c5f6475726174696f6ec0a9726f757465725f69642aa96c6f72615f6e616d65c0";

    @Test
    void theSpecVectorsEncodeByteForByte() {
        byte[] free = ReplicaEventCodec.encode(new LoadEvent.Freed(P, 4, "r1", 1, 0, null), 42);
        assertEquals(133, free.length);
        assertEquals(FREE, HexFormat.of().formatHex(free));
        byte[] add = ReplicaEventCodec.encode(
                new LoadEvent.Added(P, 4, "r1", 1, 0, null, new long[] {7}, true, null, 4), 42);
        assertEquals(285, add.length);
        assertEquals(ADD, HexFormat.of().formatHex(add));
    }

    @Test
    void theSpecVectorsDecode() {
        ReplicaEventCodec.Received free =
                ReplicaEventCodec.decode(HexFormat.of().parseHex(FREE));
        assertEquals(42, free.routerId());
        assertEquals(new LoadEvent.Freed(P, 4, "r1", 1, 0, null), free.event());
        LoadEvent.Added add = (LoadEvent.Added)
                ReplicaEventCodec.decode(HexFormat.of().parseHex(ADD)).event();
        assertArrayEquals(new long[] {7}, add.sequenceHashes());
        assertEquals(4, add.prefillHint());
        assertEquals(P, add.partition());
        assertEquals(4, add.blockSize());
    }

    @Test
    void unsignedValuesPastSignedRangeRoundTrip() {
        long big = 0xF000_0000_0000_0001L;
        LoadEvent e = new LoadEvent.Added(P, 16, "x", big, 3, "lora", new long[] {big, -1L}, false, 12L, 0);
        ReplicaEventCodec.Received back = ReplicaEventCodec.decode(ReplicaEventCodec.encode(e, big));
        LoadEvent.Added a = (LoadEvent.Added) back.event();
        assertEquals(big, a.workerId());
        assertEquals(big, back.routerId());
        assertArrayEquals(new long[] {big, -1L}, a.sequenceHashes());
        assertEquals("lora", a.loraName());
        assertEquals(12L, a.expectedOutputTokens());
    }

    @Test
    void aUnitVariantAsAOneEntryMapIsAccepted() {
        // {"data": {"Free": nil}} instead of "Free"
        String mapped = FREE.replace("a464617461a446726565", "a46461746181a446726565c0");
        assertEquals(
                new LoadEvent.Freed(P, 4, "r1", 1, 0, null),
                ReplicaEventCodec.decode(HexFormat.of().parseHex(mapped)).event());
    }

    @Test
    void hostilePayloadsAreRefused() {
        byte[] hugeArray = HexFormat.of().parseHex("dd7fffffff");
        assertThrows(IllegalArgumentException.class, () -> ReplicaEventCodec.decode(hugeArray));
        byte[] hugeString = HexFormat.of().parseHex("81db7fffffff");
        assertThrows(IllegalArgumentException.class, () -> ReplicaEventCodec.decode(hugeString));
        assertThrows(IllegalArgumentException.class, () -> ReplicaEventCodec.decode(new byte[] {(byte) 0xc1}));
        byte[] truncated = HexFormat.of().parseHex(ADD.substring(0, 200));
        assertThrows(IllegalArgumentException.class, () -> ReplicaEventCodec.decode(truncated));
        StringBuilder deep = new StringBuilder("84aa6d6f64656c5f6e616d65a56d6f64656ca178");
        deep.append("91".repeat(50)).append("00");
        assertThrows(
                IllegalArgumentException.class,
                () -> ReplicaEventCodec.decode(HexFormat.of().parseHex(deep.toString())));
    }
}
