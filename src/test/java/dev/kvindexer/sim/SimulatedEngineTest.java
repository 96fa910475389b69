package dev.kvindexer.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.wire.LiveFrames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.zeromq.ZMQ;

/** A real engine rank on loopback: live frames, replay in both reply styles, drops, restarts, and its truth. */
class SimulatedEngineTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final byte[] SENTINEL = LiveFrames.seqFrame(-1L);

    private final ZmqPeers peers = new ZmqPeers();
    private final List<SimulatedEngine> engines = new ArrayList<>();

    @AfterEach
    void tearDown() {
        engines.forEach(SimulatedEngine::close);
        peers.close();
    }

    private SimulatedEngine engine(UnaryOperator<EngineConfig> adjust) {
        SimulatedEngine e =
                SimulatedEngine.start(adjust.apply(EngineConfig.local(7, 0).withCache(16, 64, 0)));
        engines.add(e);
        return e;
    }

    private static void feed(SimulatedEngine e, int requests, long seed) throws InterruptedException {
        SyntheticPrompts prompts = new SyntheticPrompts(seed, e.config().blockSize(), 3, 2, 4, 24);
        for (int i = 0; i < requests; i++) {
            e.submit(prompts.next());
        }
        assertTrue(e.awaitIdle(WAIT), "engine did not publish everything");
    }

    private static ZMQ.Socket subscribe(ZmqPeers peers, SimulatedEngine e, long subscriptionsBefore)
            throws InterruptedException {
        ZMQ.Socket sub = peers.subscriber(e.endpoint());
        awaitSubscriptions(sub, e, subscriptionsBefore + 1);
        return sub;
    }

    /**
     * A SUB sends its subscription (also after a reconnect) only when its own thread processes commands, which an
     * indexer's receive loop always does; here {@code getEvents()} does it without consuming a message.
     */
    private static void awaitSubscriptions(ZMQ.Socket sub, SimulatedEngine e, long n) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (e.subscriptions() < n && System.nanoTime() < deadline) {
            sub.getEvents();
            Thread.sleep(2);
        }
        assertEquals(n, e.subscriptions(), "subscription never reached the engine");
    }

    @Test
    void liveBatchesAreThreeFramesWithConsecutiveSeqsAndDecodeToTheTruth() throws Exception {
        SimulatedEngine e = engine(c -> c.withTopic("kv@sim@m").withCache(16, 20, 40));
        ZMQ.Socket sub = subscribe(peers, e, 0);
        feed(e, 60, 1);
        DecodedTruth truth = new DecodedTruth(7, 0, 16);
        for (long seq = 0; seq < 60; seq++) {
            List<byte[]> msg = ZmqPeers.recv(sub);
            assertEquals(3, msg.size());
            assertEquals("kv@sim@m", new String(msg.get(0), StandardCharsets.UTF_8));
            assertEquals(seq, LiveFrames.seq(msg.get(1)));
            truth.apply(seq, msg.get(2));
        }
        assertEquals(60, e.generationBatches());
        assertFalse(e.held().isEmpty());
        assertTrue(e.heldHostBlocks() > 0, "the CPU tier should have received evicted blocks");
        assertEquals(truth.held(), e.held());
    }

    @ParameterizedTest
    @EnumSource(ReplayStyle.class)
    void replayReturnsEveryBatchFromStartThenTheSentinel(ReplayStyle style) throws Exception {
        SimulatedEngine e = engine(c -> c.withTopic("t").withReplayStyle(style));
        ZMQ.Socket sub = subscribe(peers, e, 0);
        feed(e, 12, 2);
        Map<Long, byte[]> live = new HashMap<>();
        for (int i = 0; i < 12; i++) {
            List<byte[]> msg = ZmqPeers.recv(sub);
            live.put(LiveFrames.seq(msg.get(1)), msg.get(2));
        }
        ZMQ.Socket dealer = peers.dealer(e.replayEndpoint());
        ZmqPeers.requestReplay(dealer, 5);
        int frames = style == ReplayStyle.FOUR_FRAME ? 4 : 3;
        for (long seq = 5; seq < 12; seq++) {
            List<byte[]> msg = ZmqPeers.recv(dealer);
            assertEquals(frames, msg.size());
            assertEquals(0, msg.get(0).length);
            if (style == ReplayStyle.FOUR_FRAME) {
                assertArrayEquals("t".getBytes(StandardCharsets.UTF_8), msg.get(1));
            }
            assertEquals(seq, LiveFrames.seq(msg.get(frames - 2)));
            assertArrayEquals(live.get(seq), msg.get(frames - 1));
        }
        List<byte[]> sentinel = ZmqPeers.recv(dealer);
        assertEquals(frames, sentinel.size());
        assertArrayEquals(SENTINEL, sentinel.get(frames - 2));
        assertEquals(0, sentinel.get(frames - 1).length);
        if (style == ReplayStyle.FOUR_FRAME) {
            assertEquals(0, sentinel.get(1).length);
        }
        // A start beyond the newest batch gets just the sentinel.
        ZmqPeers.requestReplay(dealer, 100);
        assertArrayEquals(SENTINEL, ZmqPeers.recv(dealer).get(frames - 2));
    }

    @Test
    void malformedReplayRequestsGetNoReplyAndTheEngineKeepsServing() throws Exception {
        SimulatedEngine e = engine(c -> c.withReplayStyle(ReplayStyle.THREE_FRAME));
        feed(e, 3, 3);
        ZMQ.Socket dealer = peers.dealer(e.replayEndpoint());
        ZmqPeers.send(dealer, LiveFrames.seqFrame(0)); // router sees 2 frames
        ZmqPeers.send(dealer, new byte[0], LiveFrames.seqFrame(0), new byte[] {1}); // 4 frames
        ZmqPeers.send(dealer, new byte[0], new byte[] {0, 0, 0, 1}); // seq frame of 4 bytes
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (e.replaysIgnored() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(3, e.replaysIgnored());
        ZmqPeers.requestReplay(dealer, 2);
        // ZMQ keeps order on a connection: a reply to any bad request would arrive before this one.
        List<byte[]> first = ZmqPeers.recv(dealer);
        assertEquals(2, LiveFrames.seq(first.get(1)));
        assertArrayEquals(SENTINEL, ZmqPeers.recv(dealer).get(1));
        feed(e, 1, 4);
        assertEquals(4, e.generationBatches());
        assertEquals(1, e.replaysServed());
    }

    @Test
    void droppedBatchesAreMissingLiveButReplayed() throws Exception {
        SimulatedEngine e = engine(c -> c.withDrops(0.3, 99));
        DropSchedule drops = e.dropSchedule(0);
        List<Long> expectedLive = new ArrayList<>();
        for (long s = 0; s < 40; s++) {
            if (!drops.drops(s)) {
                expectedLive.add(s);
            }
        }
        assertTrue(expectedLive.size() < 40 && expectedLive.size() > 15, "seed should drop some, not most");
        ZMQ.Socket sub = subscribe(peers, e, 0);
        feed(e, 40, 5);
        List<Long> received = new ArrayList<>();
        Map<Long, byte[]> livePayloads = new HashMap<>();
        for (int i = 0; i < expectedLive.size(); i++) {
            List<byte[]> msg = ZmqPeers.recv(sub);
            received.add(LiveFrames.seq(msg.get(1)));
            livePayloads.put(LiveFrames.seq(msg.get(1)), msg.get(2));
        }
        assertEquals(expectedLive, received);
        assertEquals(40 - expectedLive.size(), e.droppedBatches());

        ZMQ.Socket dealer = peers.dealer(e.replayEndpoint());
        ZmqPeers.requestReplay(dealer, 0);
        DecodedTruth truth = new DecodedTruth(7, 0, 16);
        for (long seq = 0; seq < 40; seq++) {
            List<byte[]> msg = ZmqPeers.recv(dealer);
            assertEquals(seq, LiveFrames.seq(msg.get(2)));
            if (livePayloads.containsKey(seq)) {
                assertArrayEquals(livePayloads.get(seq), msg.get(3));
            }
            truth.apply(seq, msg.get(3));
        }
        assertEquals(0, ZmqPeers.recv(dealer).get(3).length);
        assertEquals(truth.held(), e.held());
    }

    @Test
    void restartStartsAgainAtSeqZeroWithAnEmptyCacheAndReplayBuffer() throws Exception {
        SimulatedEngine e = engine(c -> c.withHashKind(EngineHashKind.RANDOM).withReplayStyle(ReplayStyle.THREE_FRAME));
        int livePort = e.livePort();
        int replayPort = e.replayPort();
        ZMQ.Socket sub = subscribe(peers, e, 0);
        feed(e, 5, 6);
        for (int i = 0; i < 5; i++) {
            ZmqPeers.recv(sub);
        }
        assertFalse(e.held().isEmpty());

        e.restart();
        assertEquals(1, e.generation());
        assertTrue(e.held().isEmpty());
        assertEquals(0, e.generationBatches());
        assertEquals(livePort, e.livePort());
        assertEquals(replayPort, e.replayPort());

        // The SUB reconnects by itself to the new publisher on the same port.
        awaitSubscriptions(sub, e, 2);
        feed(e, 1, 7);
        List<byte[]> msg = ZmqPeers.recv(sub);
        assertEquals(0, LiveFrames.seq(msg.get(1)));
        DecodedTruth truth = new DecodedTruth(7, 0, 16);
        truth.apply(0, msg.get(2));
        assertEquals(truth.held(), e.held());

        ZMQ.Socket dealer = peers.dealer(e.replayEndpoint());
        ZmqPeers.requestReplay(dealer, 0);
        assertEquals(0, LiveFrames.seq(ZmqPeers.recv(dealer).get(1)));
        assertArrayEquals(SENTINEL, ZmqPeers.recv(dealer).get(1));
        assertEquals(6, e.totalBatches());
    }

    @ParameterizedTest
    @EnumSource(BatchEncoder.Format.class)
    void everyWireFormatDecodesToTheTruthIncludingTheHostTier(BatchEncoder.Format format) throws Exception {
        SimulatedEngine e = engine(
                c -> c.withFormat(format).withHashKind(EngineHashKind.RANDOM).withCache(16, 12, 24));
        ZMQ.Socket sub = subscribe(peers, e, 0);
        feed(e, 50, 8);
        DecodedTruth truth = new DecodedTruth(7, 0, 16);
        for (long seq = 0; seq < 50; seq++) {
            List<byte[]> msg = ZmqPeers.recv(sub);
            truth.apply(LiveFrames.seq(msg.get(1)), msg.get(2));
        }
        assertEquals(truth.held(), e.held());
        assertTrue(e.heldHostBlocks() > 0);
    }
}
