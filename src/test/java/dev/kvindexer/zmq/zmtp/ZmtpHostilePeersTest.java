package dev.kvindexer.zmq.zmtp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HostileScripts;
import dev.kvindexer.support.ScriptedZmtpPeer;
import dev.kvindexer.support.TestPublisher;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a connection may hold is bounded by construction: parts in count and overhead, frames grown only as bytes
 * arrive, replies owed to a peer that does not read, the time a message may take, and everything together by the
 * budget. Each hostile peer is dropped for its own reason, its bytes are given back, and it is connected to again.
 */
class ZmtpHostilePeersTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final long LIMIT = 64L << 20;
    private static final ZmtpConfig SETTINGS = ZmtpConfig.defaults(LIMIT)
            .withHeartbeat(Duration.ofMillis(500), Duration.ofSeconds(5))
            .withProtocolErrorDelay(Duration.ofMillis(200))
            .withMessageTimeout(Duration.ofMillis(1500));

    private PolledSubscriber sub;

    @AfterEach
    void stop() {
        if (sub != null) {
            sub.close();
        }
    }

    @Test
    void endlessEmptyPartsEndAtThePartLimit() throws Exception {
        assertDropped(
                HostileScripts.endlessEmptyParts(),
                f -> f instanceof ZmtpFailure.BrokenProtocol
                        && f.describe().contains("more than " + ZmtpFrameReader.MAX_PARTS + " parts"));
    }

    @Test
    void endlessOneBytePartsEndAtThePartLimit() throws Exception {
        assertDropped(
                HostileScripts.endlessOneByteParts(),
                f -> f instanceof ZmtpFailure.BrokenProtocol && f.describe().contains("parts"));
    }

    @Test
    void aPeerThatFloodsPingsAndReadsNothingIsDroppedOnceItsRepliesPileUp() throws Exception {
        assertDropped(HostileScripts.pingFlood(), f -> f instanceof ZmtpFailure.Unread);
    }

    @Test
    void aMessageDripFedAByteAtATimeIsDroppedAtItsDeadline() throws Exception {
        NetworkBudget budget = new NetworkBudget(256L << 20);
        long[] peak = {0};
        assertDropped(
                HostileScripts.declareThenDrip(60L << 20, 10, Duration.ofMillis(100)),
                budget,
                f -> f instanceof ZmtpFailure.Stalled,
                () -> peak[0] = Math.max(peak[0], budget.held()));
        // 60 MiB declared; what was held is what arrived, within the first allocation.
        assertTrue(budget.peak() <= ZmtpFrameReader.FIRST_ALLOCATION + 4096, "peak " + budget.peak());
    }

    @Test
    void halfAFrameThenSilenceIsDroppedAtItsDeadline() throws Exception {
        assertDropped(
                HostileScripts.halfFrameThenSilence(),
                f -> f instanceof ZmtpFailure.Stalled || f instanceof ZmtpFailure.Lost);
    }

    @Test
    void aHandshakeFedAByteAtATimeIsDroppedAtTheHandshakeDeadline() throws Exception {
        assertDropped(
                HostileScripts.dripFedHandshake(Duration.ofMillis(200)),
                f -> f instanceof ZmtpFailure.Unreachable && f.describe().contains("handshake"));
    }

    @Test
    void aMessageTheBudgetCannotHoldCostsItsConnectionAndSmallMessagesStillFlow() throws Exception {
        // 8 MiB together; one connection may take it past 1 MiB only while a quarter stays free.
        NetworkBudget budget = new NetworkBudget(8L << 20);
        try (ScriptedZmtpPeer hog = new ScriptedZmtpPeer(
                        HostileScripts.declareThenDrip(7L << 20, (7 << 20) - 1, Duration.ofSeconds(1)), true);
                TestPublisher honest = new TestPublisher()) {
            sub = new PolledSubscriber(SETTINGS, budget);
            sub.open(hog.endpoint());
            sub.open(honest.endpoint());
            honest.awaitSubscriber();
            Await.until(
                    "the hog is dropped for the budget and tried again",
                    WAIT,
                    () -> hog.accepted() >= 2
                            && sub.failures.stream().anyMatch(f -> f instanceof ZmtpFailure.OverBudget));
            for (int i = 0; i < 100; i++) {
                honest.sendFrames(("batch " + i).getBytes(StandardCharsets.US_ASCII));
            }
            Await.until("the honest publisher's messages all arrive", WAIT, () -> sub.messages.size() == 100);
            assertTrue(budget.peak() <= budget.limit() - budget.limit() / 4 + (1 << 20), "peak " + budget.peak());
        }
        sub.close();
        assertEquals(0, budget.held(), "every byte given back");
    }

    @Test
    void aLegitimateLargeMessageArrivesWholeThroughGrowingArrays() throws Exception {
        NetworkBudget budget = new NetworkBudget(64L << 20);
        try (TestPublisher pub = new TestPublisher()) {
            sub = new PolledSubscriber(SETTINGS, budget);
            sub.open(pub.endpoint());
            pub.awaitSubscriber();
            byte[] big = new byte[5 << 20];
            ByteBuffer.wrap(big).putLong(0, 0x1122334455667788L).putLong(big.length - 8, 0x0102030405060708L);
            pub.sendFrames("t".getBytes(StandardCharsets.US_ASCII), new byte[8], big);
            Await.until("the message arrived", WAIT, () -> sub.messages.size() == 1);
            byte[] got = sub.messages.get(0).get(2);
            assertEquals(big.length, got.length);
            assertEquals(0x1122334455667788L, ByteBuffer.wrap(got).getLong(0));
            assertEquals(0x0102030405060708L, ByteBuffer.wrap(got).getLong(big.length - 8));
            Await.until("its bytes given back", WAIT, () -> budget.held() == 0);
        }
    }

    private void assertDropped(ScriptedZmtpPeer.Script script, Predicate<ZmtpFailure> expected) throws Exception {
        assertDropped(script, new NetworkBudget(256L << 20), expected, () -> {});
    }

    /**
     * The peer playing {@code script} is dropped for the expected failure and connected to again, while a real
     * publisher on the same subscriber keeps delivering; once the subscriber closes, the budget holds nothing.
     */
    private void assertDropped(
            ScriptedZmtpPeer.Script script, NetworkBudget budget, Predicate<ZmtpFailure> expected, Runnable sample)
            throws Exception {
        try (ScriptedZmtpPeer peer = new ScriptedZmtpPeer(script, true);
                TestPublisher honest = new TestPublisher()) {
            sub = new PolledSubscriber(SETTINGS, budget);
            sub.open(peer.endpoint());
            sub.open(honest.endpoint());
            honest.awaitSubscriber();
            Await.until("dropped as expected and tried again", WAIT, () -> {
                sample.run();
                return peer.accepted() >= 2 && sub.failures.stream().anyMatch(expected);
            });
            ZmtpFailure why = sub.failures.stream().filter(expected).findFirst().orElseThrow();
            assertInstanceOf(ZmtpFailure.class, why);
            honest.sendFrames("still flowing".getBytes(StandardCharsets.US_ASCII));
            Await.until(
                    "the honest publisher's message arrives",
                    WAIT,
                    () -> sub.messages.stream().anyMatch(m -> m.size() == 1 && m.get(0).length == 13));
        }
        sub.close();
        assertEquals(0, budget.held(), "every byte given back");
    }
}
