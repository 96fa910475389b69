package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

/** Shard messages sealed with the cluster token: tampered, unsigned or replayed ones are refused. */
class ShardSealTest {
    private final ShardSeal seal = new ShardSeal("s3cret");
    private final Buffer body = Buffer.buffer("a shard query");

    @Test
    void aSealedRequestAndItsReplyOpen() {
        Buffer request = seal.request("shard.query", body);
        assertEquals(body.length() + ShardSeal.MAC_BYTES, request.length());
        assertEquals(body, seal.openRequest("shard.query", request));
        Buffer reply = seal.reply("shard.query", request, Buffer.buffer("an answer"));
        assertEquals(Buffer.buffer("an answer"), seal.openReply("shard.query", request, reply));
    }

    @Test
    void tamperedUnsignedOrForeignMessagesAreRefused() {
        Buffer request = seal.request("shard.query", body);
        Buffer tampered = request.copy();
        tampered.setByte(0, (byte) 'A');
        assertEquals(
                "bad_signature",
                assertThrows(SecurityException.class, () -> seal.openRequest("shard.query", tampered))
                        .getMessage());
        assertEquals(
                "unsigned",
                assertThrows(SecurityException.class, () -> seal.openRequest("shard.query", Buffer.buffer("short")))
                        .getMessage());
        assertThrows(SecurityException.class, () -> seal.openRequest("shard.snapshot", request), "another kind");
        assertThrows(
                SecurityException.class,
                () -> new ShardSeal("other").openRequest("shard.query", request),
                "another token");
        Buffer reply = seal.reply("shard.query", request, Buffer.buffer("an answer"));
        Buffer otherRequest = seal.request("shard.query", Buffer.buffer("another query"));
        assertThrows(
                SecurityException.class,
                () -> seal.openReply("shard.query", otherRequest, reply),
                "a reply answers only its own request");
    }

    @Test
    void withoutATokenNothingIsSealed() {
        ShardSeal open = new ShardSeal(null);
        assertEquals(body, open.request("shard.query", body));
        assertEquals(body, open.openRequest("shard.query", body));
    }
}
