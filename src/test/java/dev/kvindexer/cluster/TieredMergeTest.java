package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.PartitionIndex;
import dev.kvindexer.index.TieredMatch;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Tier-by-tier matches of owners split over several indexes merge into exactly what one index holding them all
 * answers, including the zero entries of a tier one part has no index for.
 */
class TieredMergeTest {
    private static final int BLOCKS = 12;

    /** One owner's chain: device for the first {@code device} blocks, then host then disk. */
    private static void store(PartitionIndex index, long worker, long[] locals, int device, int host) {
        long[] engine = new long[locals.length];
        for (int i = 0; i < locals.length; i++) {
            engine[i] = locals[i] * 31 + worker;
        }
        index.store(
                worker,
                0,
                StorageTier.DEVICE,
                false,
                0,
                java.util.Arrays.copyOfRange(engine, 0, device),
                java.util.Arrays.copyOfRange(locals, 0, device));
        if (host > 0) {
            index.store(
                    worker,
                    0,
                    StorageTier.HOST_PINNED,
                    device > 0,
                    device > 0 ? engine[device - 1] : 0,
                    java.util.Arrays.copyOfRange(engine, device, device + host),
                    java.util.Arrays.copyOfRange(locals, device, device + host));
        }
        if (device + host < locals.length) {
            index.store(
                    worker,
                    0,
                    StorageTier.DISK,
                    true,
                    engine[device + host - 1],
                    java.util.Arrays.copyOfRange(engine, device + host, locals.length),
                    java.util.Arrays.copyOfRange(locals, device + host, locals.length));
        }
    }

    private static void assertSame(TieredMatch expected, TieredMatch got) {
        assertOwners(expected.device(), got.device());
        assertEquals(expected.lowerTiers().size(), got.lowerTiers().size(), "tiers");
        for (int i = 0; i < expected.lowerTiers().size(); i++) {
            assertEquals(
                    expected.lowerTiers().get(i).tier(), got.lowerTiers().get(i).tier());
            assertOwners(
                    expected.lowerTiers().get(i).hits(), got.lowerTiers().get(i).hits());
        }
    }

    private static void assertOwners(TieredMatch.Owners expected, TieredMatch.Owners got) {
        assertArrayEquals(expected.workers(), got.workers());
        assertArrayEquals(expected.ranks(), got.ranks());
        assertArrayEquals(expected.blocks(), got.blocks());
    }

    @Test
    void ownersSplitOverIndexesMergeIntoTheWholeIndexAnswer() {
        SplittableRandom rnd = new SplittableRandom(5);
        long[] prompt = rnd.longs(BLOCKS).toArray();
        PartitionIndex whole = new PartitionIndex(16);
        PartitionIndex first = new PartitionIndex(16); // workers 1, 2 and 4: device, host and disk tiers
        PartitionIndex second = new PartitionIndex(16); // worker 3 alone: no lower-tier index at all
        store(whole, 1, prompt, 3, 4);
        store(first, 1, prompt, 3, 4);
        store(whole, 2, prompt, 6, 0);
        store(first, 2, prompt, 6, 0);
        long[] other = prompt.clone();
        other[5] = rnd.nextLong();
        store(whole, 3, other, BLOCKS, 0);
        store(second, 3, other, BLOCKS, 0);
        store(whole, 4, prompt, 2, 2);
        store(first, 4, prompt, 2, 2);
        for (long[] q : List.of(prompt, other, java.util.Arrays.copyOf(prompt, 4), new long[] {rnd.nextLong()})) {
            TieredMerge merge = new TieredMerge();
            merge.add(first.matchTiered(q));
            merge.add(second.matchTiered(q));
            TieredMatch expected = whole.matchTiered(q);
            assertSame(expected, merge.result());
        }
        assertTrue(whole.matchTiered(other).lowerTiers().size() >= 2, "the case has lower tiers");
        assertTrue(second.matchTiered(other).lowerTiers().isEmpty(), "and a part without them");
    }
}
