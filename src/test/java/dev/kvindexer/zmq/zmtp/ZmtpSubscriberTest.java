package dev.kvindexer.zmq.zmtp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.support.Await;
import dev.kvindexer.support.ConnectingPublisher;
import dev.kvindexer.support.FreePort;
import dev.kvindexer.support.HostileZmtpPublisher;
import dev.kvindexer.support.ScriptedZmtpPeer;
import dev.kvindexer.support.TestPublisher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The NIO ZMTP subscriber against real JeroMQ publishers (PUB and XPUB) and against scripted peers that break the
 * protocol, fall silent or are no publisher at all.
 */
class ZmtpSubscriberTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final long LIMIT = 1 << 20;
    private static final ZmtpConfig SETTINGS = ZmtpConfig.defaults(LIMIT)
            .withHeartbeat(Duration.ofMillis(200), Duration.ofMillis(800))
            .withProtocolErrorDelay(Duration.ofMillis(200));

    private final ZContext ctx = new ZContext();
    private PolledSubscriber sub;

    @AfterEach
    void stop() {
        if (sub != null) {
            sub.close();
        }
        ctx.close();
    }

    @Test
    void multipartMessagesFromAnXpubArriveByteExact() throws Exception {
        try (TestPublisher pub = new TestPublisher()) {
            sub = new PolledSubscriber(SETTINGS);
            sub.open(pub.endpoint());
            pub.awaitSubscriber();
            List<byte[][]> sent = new ArrayList<>();
            SplittableRandom rnd = new SplittableRandom(23);
            // Sizes around the short/long frame boundary, empty frames, a large frame, many frames.
            for (int size : new int[] {0, 1, 254, 255, 256, 257, 65_535, 65_536, 700_000}) {
                sent.add(new byte[][] {bytes(rnd, 3), bytes(rnd, 8), bytes(rnd, size)});
            }
            sent.add(new byte[][] {new byte[0]});
            sent.add(new byte[12][]);
            for (int i = 0; i < 12; i++) {
                sent.get(sent.size() - 1)[i] = bytes(rnd, i * 31);
            }
            for (byte[][] m : sent) {
                pub.sendFrames(m);
            }
            Await.until("every message arrived", WAIT, () -> sub.messages.size() == sent.size());
            for (int i = 0; i < sent.size(); i++) {
                List<byte[]> got = sub.messages.get(i);
                assertEquals(sent.get(i).length, got.size(), "frames of message " + i);
                for (int f = 0; f < got.size(); f++) {
                    assertArrayEquals(sent.get(i)[f], got.get(f), "message " + i + " frame " + f);
                }
            }
            assertEquals(1, sub.connects.get());
        }
    }

    @Test
    void aPlainPubDeliversOnceItHasTheSubscription() {
        ZMQ.Socket pub = publisher(SocketType.PUB, "tcp://127.0.0.1:0");
        sub = new PolledSubscriber(SETTINGS);
        sub.open(pub.getLastEndpoint());
        // A PUB says nothing of its subscribers: send until the first message shows the subscription took.
        Await.until("a message arrived", WAIT, () -> {
            pub.send("probe");
            return !sub.messages.isEmpty();
        });
        sub.messages.clear();
        for (int seq = 0; seq < 1000; seq++) {
            pub.sendMore("kv");
            pub.send(Integer.toString(seq));
        }
        Await.until(
                "a thousand messages",
                WAIT,
                () -> sub.messages.stream().filter(m -> m.size() == 2).count() == 1000);
        List<List<byte[]>> two =
                sub.messages.stream().filter(m -> m.size() == 2).toList();
        for (int seq = 0; seq < 1000; seq++) {
            assertEquals(Integer.toString(seq), new String(two.get(seq).get(1), StandardCharsets.US_ASCII));
        }
    }

    @Test
    void aMessageOverTheLimitEndsTheConnectionWhichIsMadeAgain() {
        try (TestPublisher pub = new TestPublisher()) {
            sub = new PolledSubscriber(SETTINGS);
            sub.open(pub.endpoint());
            pub.awaitSubscriber();
            // Frames within the limit that together pass it count as one message over it.
            pub.sendFrames(new byte[(int) LIMIT / 2], new byte[(int) LIMIT / 2 + 1]);
            pub.awaitSubscriber();
            pub.sendFrames("after".getBytes(StandardCharsets.US_ASCII));
            Await.until("the next message arrived on the new connection", WAIT, () -> sub.messages.size() == 1);
            ZmtpFailure.TooLarge refused = assertInstanceOf(ZmtpFailure.TooLarge.class, sub.failures.peek());
            assertEquals(LIMIT / 2 + 1, refused.declaredBytes());
            assertEquals(LIMIT / 2, refused.bytesBefore());
            assertEquals(2, sub.connects.get());
        }
    }

    @Test
    void aFrameDeclaringGigabytesIsRefusedFromItsHeader() throws Exception {
        // Were it allocated, 1.5 GB would not fit the test JVM's heap.
        try (HostileZmtpPublisher bomb = new HostileZmtpPublisher(1_500_000_000L)) {
            sub = new PolledSubscriber(SETTINGS);
            sub.open(bomb.endpoint());
            Await.until("refused and tried again", WAIT, () -> bomb.accepted() >= 3 && sub.failures.size() >= 2);
            ZmtpFailure.TooLarge refused = assertInstanceOf(ZmtpFailure.TooLarge.class, sub.failures.peek());
            assertEquals(1_500_000_000L, refused.declaredBytes());
            assertTrue(sub.messages.isEmpty());
        }
    }

    @Test
    void garbageIsDroppedAtItsFirstByteAndTriedAgain() throws Exception {
        assertBroken(
                s -> s.getOutputStream().write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(StandardCharsets.US_ASCII)),
                "not a ZMTP peer");
        assertEquals(0, sub.connects.get());
    }

    @Test
    void aGreetingOfAnotherVersionOrMechanismIsDropped() throws Exception {
        assertBroken(s -> s.getOutputStream().write(ScriptedZmtpPeer.greeting(2, "NULL")), "version 2");
        sub.close();
        assertBroken(s -> s.getOutputStream().write(ScriptedZmtpPeer.greeting(3, "PLAIN")), "mechanism PLAIN");
    }

    @Test
    void aBrokenFrameAfterTheHandshakeIsDropped() throws Exception {
        assertBroken(
                s -> {
                    ScriptedZmtpPeer.handshakeAsPublisher(s);
                    s.getOutputStream().write(new byte[] {(byte) 0x80, 1, 0});
                },
                "reserved frame flags");
        assertTrue(sub.connects.get() >= 1);
    }

    @Test
    void aPeerThatIsNoPublisherIsDroppedAndTriedAgain() throws Exception {
        assertBroken(
                s -> {
                    s.getOutputStream().write(ScriptedZmtpPeer.greeting(3, "NULL"));
                    s.getOutputStream().write(ScriptedZmtpPeer.ready("REQ"));
                },
                "a REQ socket");
        sub.close();
        // A real JeroMQ REQ refuses a SUB itself, and may close before its READY is out: dropped all the same.
        ZMQ.Socket req = publisher(SocketType.REQ, "tcp://127.0.0.1:0");
        sub = new PolledSubscriber(SETTINGS);
        sub.open(req.getLastEndpoint());
        Await.until("dropped twice", WAIT, () -> sub.failures.size() >= 2);
        assertEquals(0, sub.connects.get());
    }

    @Test
    void anEngineThatComesUpLaterIsConnectedTo() throws Exception {
        int port = FreePort.any();
        sub = new PolledSubscriber(SETTINGS);
        sub.open("tcp://127.0.0.1:" + port);
        Await.until("refused while nothing listens", WAIT, () -> sub.failures.size() >= 2);
        assertInstanceOf(ZmtpFailure.Unreachable.class, sub.failures.peek());
        assertEquals(0, sub.connects.get());
        ZMQ.Socket pub = publisher(SocketType.XPUB, "tcp://127.0.0.1:" + port);
        pub.setReceiveTimeOut(10_000);
        assertEquals(1, pub.recv(0)[0], "the subscription arrives");
        pub.send("up");
        Await.until("its message arrived", WAIT, () -> sub.messages.size() == 1);
    }

    @Test
    void aQuietPublisherIsKeptByHeartbeats() throws Exception {
        try (TestPublisher pub = new TestPublisher()) {
            // A timeout ten PINGs long, so that a loaded machine's pause does not read as a silent publisher.
            sub = new PolledSubscriber(SETTINGS.withHeartbeat(Duration.ofMillis(200), Duration.ofMillis(2000)));
            sub.open(pub.endpoint());
            pub.awaitSubscriber();
            Await.until("connected", WAIT, () -> sub.connects.get() == 1);
            // Two heartbeat timeouts without a message: JeroMQ answers each PING, so the connection stays.
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(4400);
            while (System.nanoTime() < until) {
                assertTrue(sub.failures.isEmpty(), "dropped: " + sub.failures);
                Thread.sleep(50);
            }
            pub.sendFrames("still here".getBytes(StandardCharsets.US_ASCII));
            Await.until("the message arrived", WAIT, () -> sub.messages.size() == 1);
            assertEquals(1, sub.connects.get());
        }
    }

    @Test
    void aBusyPublisherKeepsHearingFromUs() throws Exception {
        try (TestPublisher pub = new TestPublisher()) {
            sub = new PolledSubscriber(SETTINGS.withHeartbeat(Duration.ofMillis(200), Duration.ofMillis(2000)));
            sub.open(pub.endpoint());
            pub.awaitSubscriber();
            // Quiet first, so a PING goes out. Its TTL (2 s) has JeroMQ drop a subscriber it has not heard from for
            // that long, even one it keeps sending to, so PINGs must go on while messages flow.
            Thread.sleep(600);
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3500);
            int sent = 0;
            while (System.nanoTime() < until) {
                pub.sendFrames(new byte[] {(byte) sent++});
                Thread.sleep(50);
            }
            int all = sent;
            Await.until("every message arrived", WAIT, () -> sub.messages.size() == all);
            assertTrue(sub.failures.isEmpty(), "dropped: " + sub.failures);
            assertEquals(1, sub.connects.get());
        }
    }

    @Test
    void aPublisherThatFallsSilentIsDroppedAndTriedAgain() throws Exception {
        // Completes the handshake, then neither sends nor answers PINGs: a half-open connection.
        try (ScriptedZmtpPeer silent = new ScriptedZmtpPeer(ScriptedZmtpPeer::handshakeAsPublisher)) {
            sub = new PolledSubscriber(SETTINGS);
            sub.open(silent.endpoint());
            Await.until(
                    "dropped for silence and connected again",
                    WAIT,
                    () -> silent.accepted() >= 2 && sub.connects.get() >= 2);
            ZmtpFailure lost = assertInstanceOf(ZmtpFailure.Lost.class, sub.failures.peek());
            assertTrue(lost.describe().contains("heartbeat"), lost.describe());
        }
    }

    @Test
    void aBoundEndpointTakesAPublisherThatConnects() {
        int port = FreePort.any();
        sub = new PolledSubscriber(SETTINGS);
        ZmtpEndpoint bound = sub.open("tcp://*:" + port);
        assertTrue(bound.binds());
        try (ConnectingPublisher pub = new ConnectingPublisher(ctx, "tcp://127.0.0.1:" + port)) {
            pub.sendUntil(
                    "a message arrived",
                    WAIT,
                    n -> new byte[][] {"to the bound subscriber".getBytes(StandardCharsets.US_ASCII)},
                    () -> !sub.messages.isEmpty());
        }
        assertTrue(sub.connects.get() >= 1);
    }

    @Test
    void ipv6AndHostNamesAreConnectedTo() {
        ZMQ.Socket v6 = ctx.createSocket(SocketType.XPUB);
        v6.setIPv6(true);
        v6.bind("tcp://[::1]:0");
        int v6Port = Integer.parseInt(
                v6.getLastEndpoint().substring(v6.getLastEndpoint().lastIndexOf(':') + 1));
        ZMQ.Socket named = publisher(SocketType.XPUB, "tcp://127.0.0.1:0");
        String namedPort =
                named.getLastEndpoint().substring(named.getLastEndpoint().lastIndexOf(':') + 1);
        sub = new PolledSubscriber(SETTINGS);
        sub.open("tcp://[::1]:" + v6Port);
        sub.open("tcp://localhost:" + namedPort);
        Await.until("both connected", WAIT, () -> sub.connects.get() == 2);
        for (ZMQ.Socket pub : List.of(v6, named)) {
            pub.setReceiveTimeOut(10_000);
            assertEquals(1, pub.recv(0)[0], "the subscription arrives");
            pub.send("hello");
        }
        Await.until("both messages", WAIT, () -> sub.messages.size() == 2);
    }

    /** The script's peer is dropped with a protocol error naming {@code expected}, and connected to again. */
    private void assertBroken(ScriptedZmtpPeer.Script script, String expected) throws IOException {
        try (ScriptedZmtpPeer peer = new ScriptedZmtpPeer(script)) {
            sub = new PolledSubscriber(SETTINGS);
            sub.open(peer.endpoint());
            Await.until("dropped and tried again", WAIT, () -> peer.accepted() >= 2 && sub.failures.size() >= 1);
            ZmtpFailure first = sub.failures.peek();
            assertInstanceOf(ZmtpFailure.BrokenProtocol.class, first);
            assertTrue(first.describe().contains(expected), first.describe());
        }
    }

    /** A socket bound at {@code bind} that queues without limit (a PUB's default drops past 1,000 messages). */
    private ZMQ.Socket publisher(SocketType type, String bind) {
        ZMQ.Socket s = ctx.createSocket(type);
        s.setLinger(0);
        s.setSndHWM(0);
        s.bind(bind);
        return s;
    }

    private static byte[] bytes(SplittableRandom rnd, int n) {
        byte[] b = new byte[n];
        rnd.nextBytes(b);
        return b;
    }
}
