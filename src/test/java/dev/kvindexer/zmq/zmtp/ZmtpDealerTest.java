package dev.kvindexer.zmq.zmtp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.support.HostileScripts;
import dev.kvindexer.support.ScriptedZmtpPeer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The replay client's DEALER against a real JeroMQ ROUTER, and against ROUTERs that break the protocol or the bounds:
 * each is ended for its own reason, within its deadlines, and every byte it held is given back.
 */
class ZmtpDealerTest {
    private static final ZmtpConfig SETTINGS =
            ZmtpConfig.defaults(64L << 20).withMessageTimeout(Duration.ofMillis(1500));
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aRequestAndItsRepliesCrossARealRouterByteExact() throws Exception {
        NetworkBudget budget = new NetworkBudget(64L << 20);
        try (ZContext ctx = new ZContext()) {
            ZMQ.Socket router = ctx.createSocket(SocketType.ROUTER);
            router.setLinger(0);
            router.bind("tcp://127.0.0.1:0");
            try (ZmtpDealer dealer = ZmtpDealer.connect(router.getLastEndpoint(), SETTINGS, budget)) {
                dealer.send(new byte[0], "from-7".getBytes(StandardCharsets.US_ASCII));
                byte[] identity = router.recv(0);
                assertEquals(0, router.recv(0).length, "the delimiter");
                assertEquals("from-7", router.recvStr(0));
                byte[] big = new byte[300_000];
                big[299_999] = 9;
                router.sendMore(identity);
                router.sendMore(new byte[0]);
                router.sendMore("seq");
                router.send(big);
                ZmtpDealer.Message m = dealer.receive(WAIT);
                assertNotNull(m);
                List<byte[]> frames = m.frames();
                assertEquals(3, frames.size());
                assertArrayEquals(big, frames.get(2));
                assertTrue(budget.held() >= big.length, "held until released");
                dealer.release(m);
                assertNull(dealer.receive(Duration.ofMillis(200)), "nothing more came");
            }
        }
        assertEquals(0, budget.held());
    }

    @Test
    void endlessEmptyPartsEndTheReplay() throws Exception {
        assertEnded(HostileScripts.endlessEmptyParts("ROUTER"), "parts");
    }

    @Test
    void aReplyDripFedAByteAtATimeEndsAtItsDeadline() throws Exception {
        assertEnded(
                HostileScripts.declareThenDrip("ROUTER", 60L << 20, 10, Duration.ofMillis(100)), "not whole within");
    }

    @Test
    void aPeerThatFloodsPingsAndReadsNothingEndsTheReplay() throws Exception {
        assertEnded(HostileScripts.pingFlood("ROUTER"), "reads nothing");
    }

    @Test
    void aPeerThatIsNoRouterIsRefusedAtTheHandshake() throws Exception {
        try (ScriptedZmtpPeer peer = new ScriptedZmtpPeer(s -> ScriptedZmtpPeer.handshakeAs(s, "PUB"), true)) {
            IOException e = assertThrows(
                    IOException.class, () -> ZmtpDealer.connect(peer.endpoint(), SETTINGS, NetworkBudget.unbounded()));
            assertTrue(e.getMessage().contains("not a ROUTER"), e.getMessage());
        }
    }

    /** The replay against {@code script}'s peer fails with {@code expected}, and gives back all it held. */
    private static void assertEnded(ScriptedZmtpPeer.Script script, String expected) throws Exception {
        NetworkBudget budget = new NetworkBudget(256L << 20);
        try (ScriptedZmtpPeer peer = new ScriptedZmtpPeer(script, true)) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            // The peer may break the rules at once, so the handshake itself can be what fails.
            IOException e = assertThrows(IOException.class, () -> {
                try (ZmtpDealer dealer = ZmtpDealer.connect(peer.endpoint(), SETTINGS, budget)) {
                    dealer.send(new byte[0], new byte[8]);
                    while (System.nanoTime() < deadline) {
                        ZmtpDealer.Message m = dealer.receive(Duration.ofSeconds(2));
                        if (m != null) {
                            dealer.release(m);
                        }
                    }
                }
            });
            assertTrue(e.getMessage().contains(expected), e.getMessage());
        }
        assertEquals(0, budget.held(), "every byte given back");
    }
}
