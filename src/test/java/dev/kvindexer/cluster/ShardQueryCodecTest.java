package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.TieredMatch;
import io.vertx.core.buffer.Buffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The node-to-node query form round-trips, and another member's malformed bytes are refused before any allocation. */
class ShardQueryCodecTest {
    private static final ShardQueryCodec.Request REQUEST = new ShardQueryCodec.Request(
            new PartitionKey("llama-3", "grp"),
            ShardQueryCodec.SEQUENCE,
            new long[] {1, -2, Long.MAX_VALUE},
            new long[] {101, -1L});

    @Test
    void theHistoryQuestionAndEngineHashesAreKindsAndTheOneAfterThemIsRefused() {
        ShardQueryCodec.Request history =
                new ShardQueryCodec.Request(REQUEST.key(), ShardQueryCodec.HISTORY, new long[0], new long[] {101});
        Buffer bytes = ShardQueryCodec.encode(history);
        assertEquals(
                ShardQueryCodec.HISTORY, ShardQueryCodec.decodeRequest(bytes).kind());
        bytes.setByte(1, (byte) ShardQueryCodec.ENGINE);
        assertEquals(
                ShardQueryCodec.ENGINE, ShardQueryCodec.decodeRequest(bytes).kind());
        bytes.setByte(1, (byte) (ShardQueryCodec.ENGINE + 1));
        assertThrows(IllegalArgumentException.class, () -> ShardQueryCodec.decodeRequest(bytes));
    }

    @Test
    void requestsAndRepliesRoundTrip() {
        ShardQueryCodec.Request r = ShardQueryCodec.decodeRequest(ShardQueryCodec.encode(REQUEST));
        assertEquals(REQUEST.key(), r.key());
        assertEquals(ShardQueryCodec.SEQUENCE, r.kind());
        assertArrayEquals(REQUEST.hashes(), r.hashes());
        assertArrayEquals(REQUEST.workers(), r.workers());

        ShardQueryCodec.Reply reply = new ShardQueryCodec.Reply(
                16,
                new long[] {101},
                List.of(new OwnerMatch(101, 0, 3, 4, 5), new OwnerMatch(101, 1, 0, 2, 2)),
                new int[] {7, 9});
        ShardQueryCodec.Reply back = ShardQueryCodec.decodeReply(ShardQueryCodec.encode(reply));
        assertEquals(16, back.blockSize());
        assertArrayEquals(reply.served(), back.served());
        assertEquals(reply.owners(), back.owners());
        assertArrayEquals(reply.sharedReach(), back.sharedReach());
    }

    @Test
    void tieredRepliesRoundTrip() {
        TieredMatch match = new TieredMatch(
                new TieredMatch.Owners(new long[] {7, -3L}, new int[] {0, 1}, new int[] {4, 2}),
                List.of(
                        new TieredMatch.Tier(
                                StorageTier.HOST_PINNED,
                                new TieredMatch.Owners(new long[] {7}, new int[] {0}, new int[] {0})),
                        new TieredMatch.Tier(
                                StorageTier.DISK, new TieredMatch.Owners(new long[0], new int[0], new int[0]))));
        ShardQueryCodec.TieredReply back = ShardQueryCodec.decodeTieredReply(
                ShardQueryCodec.encode(new ShardQueryCodec.TieredReply(16, new long[] {7, -3L}, match)));
        assertEquals(16, back.blockSize());
        assertArrayEquals(new long[] {7, -3L}, back.served());
        assertArrayEquals(match.device().workers(), back.match().device().workers());
        assertArrayEquals(match.device().blocks(), back.match().device().blocks());
        assertEquals(2, back.match().lowerTiers().size());
        assertEquals(StorageTier.DISK, back.match().lowerTiers().get(1).tier());
        Buffer device = ShardQueryCodec.encode(new ShardQueryCodec.TieredReply(
                16,
                new long[0],
                new TieredMatch(match.device(), List.of(new TieredMatch.Tier(StorageTier.DEVICE, match.device())))));
        assertThrows(
                IllegalArgumentException.class,
                () -> ShardQueryCodec.decodeTieredReply(device),
                "the device is no lower tier");
    }

    @Test
    void malformedBytesAreRefused() {
        Buffer good = ShardQueryCodec.encode(REQUEST);
        for (int cut = 0; cut < good.length(); cut++) {
            Buffer truncated = good.getBuffer(0, cut);
            assertThrows(
                    IllegalArgumentException.class, () -> ShardQueryCodec.decodeRequest(truncated), "cut at " + cut);
        }
        assertThrows(
                IllegalArgumentException.class,
                () -> ShardQueryCodec.decodeRequest(good.copy().appendByte((byte) 0)),
                "trailing byte");
        Buffer version = good.copy();
        version.setByte(0, (byte) 9);
        assertThrows(IllegalArgumentException.class, () -> ShardQueryCodec.decodeRequest(version));
        // A declared count far beyond the message must not be allocated.
        Buffer huge = Buffer.buffer()
                .appendByte((byte) 1)
                .appendByte((byte) 0)
                .appendInt(1)
                .appendByte((byte) 'm')
                .appendInt(1)
                .appendByte((byte) 'g')
                .appendInt(Integer.MAX_VALUE);
        assertThrows(IllegalArgumentException.class, () -> ShardQueryCodec.decodeRequest(huge));
        Buffer negative = Buffer.buffer().appendByte((byte) 1).appendInt(16).appendInt(-5);
        assertThrows(IllegalArgumentException.class, () -> ShardQueryCodec.decodeReply(negative));
        Buffer kind = good.copy();
        kind.setByte(1, (byte) 7);
        assertThrows(IllegalArgumentException.class, () -> ShardQueryCodec.decodeRequest(kind));
    }
}
