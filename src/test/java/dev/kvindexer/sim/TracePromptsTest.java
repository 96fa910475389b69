package dev.kvindexer.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.hash.BlockHasher;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Trace hash_ids become tokens deterministically, and the shared Mooncake trace reads. */
class TracePromptsTest {
    private static final TraceBlocks BLOCKS = new TraceBlocks(42, TraceBlocks.MOONCAKE_BLOCK_SIZE);

    @Test
    void equalIdsAtTheSamePrefixGiveEqualTokensAndLocalHashes() {
        int[] a = BLOCKS.prompt(new long[] {0, 1, 2, 3}, 4 * 512);
        int[] b = BLOCKS.prompt(new long[] {0, 1, 2, 9}, 4 * 512);
        assertArrayEquals(Arrays.copyOf(a, 3 * 512), Arrays.copyOf(b, 3 * 512));
        long[] la = BlockHasher.localHashes(a, 512, BlockHasher.BASE_SEED);
        long[] lb = BlockHasher.localHashes(b, 512, BlockHasher.BASE_SEED);
        assertArrayEquals(Arrays.copyOf(la, 3), Arrays.copyOf(lb, 3));
        assertNotEquals(la[3], lb[3]);
        // Same again from a fresh mapping with the same seed: nothing depends on call order.
        assertArrayEquals(a, new TraceBlocks(42, 512).prompt(new long[] {0, 1, 2, 3}, 4 * 512));
        // At a smaller engine block size the shared trace blocks still share their engine blocks.
        long[] sa = BlockHasher.localHashes(a, 16, BlockHasher.BASE_SEED);
        long[] sb = BlockHasher.localHashes(b, 16, BlockHasher.BASE_SEED);
        assertArrayEquals(Arrays.copyOf(sa, 96), Arrays.copyOf(sb, 96));
    }

    @Test
    void inputLengthCutsThePartialLastBlock() {
        int[] p = BLOCKS.prompt(new long[] {5, 6}, 700);
        assertEquals(700, p.length);
        assertArrayEquals(Arrays.copyOf(BLOCKS.block(6), 188), Arrays.copyOfRange(p, 512, 700));
        assertEquals(1024, BLOCKS.prompt(new long[] {5, 6}, 5000).length);
    }

    @Test
    void readsJsonlLinesAndEndsWithNull(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("t.jsonl");
        Files.write(
                f,
                List.of(
                        "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1]}",
                        "",
                        "{\"timestamp\": 12, \"input_length\": 520, \"output_length\": 1, \"hash_ids\": [0, 2]}"));
        try (TracePrompts t = new TracePrompts(f, BLOCKS)) {
            int[] first = t.next();
            int[] second = t.next();
            assertEquals(600, first.length);
            assertArrayEquals(Arrays.copyOf(first, 512), Arrays.copyOf(second, 512));
            assertNull(t.next());
        }
    }

    @Test
    void readsTheMooncakeConversationTrace() throws Exception {
        // Its first hundred requests, unchanged, kept with the tests.
        URL excerpt = TracePromptsTest.class.getResource("/traces/mooncake_conversation_trace_head.jsonl");
        assertNotNull(excerpt, "the trace excerpt is on the test classpath");
        Path trace = Path.of(excerpt.toURI());
        try (TracePrompts t = new TracePrompts(trace, BLOCKS)) {
            TracePrompts.TraceRequest first = t.nextRequest();
            assertEquals(6758, first.inputLength());
            assertEquals(14, first.hashIds().length);
            int[] prompt = t.next();
            assertFalse(prompt.length == 0);
            for (int i = 0; i < 20; i++) {
                assertTrue(t.next().length > 0);
            }
        }
    }
}
