package dev.kvindexer.support;

import dev.kvindexer.wire.LiveFrames;
import java.nio.charset.StandardCharsets;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * An engine-side publisher for tests: an XPUB (wire-identical to a PUB) bound on loopback, so a test can
 * wait for the indexer's subscription to arrive instead of sleeping through the slow-joiner window.
 */
public final class TestPublisher implements AutoCloseable {
    private final ZContext ctx = new ZContext();
    private final ZMQ.Socket socket;
    private final String endpoint;

    public TestPublisher() {
        this(1000);
    }

    /** @param sendHighWaterMark messages queued per subscriber before more are dropped; 0 for no limit */
    public TestPublisher(int sendHighWaterMark) {
        socket = ctx.createSocket(SocketType.XPUB);
        socket.setLinger(0);
        socket.setSndHWM(sendHighWaterMark);
        // Patience for a loaded machine, where a node in a JVM of its own may take many seconds to subscribe.
        socket.setReceiveTimeOut(60_000);
        // Pass on every subscription, not only the first per topic, so a second indexer can be awaited too.
        socket.setXpubVerbose(true);
        socket.bind("tcp://127.0.0.1:0");
        endpoint = socket.getLastEndpoint();
    }

    public String endpoint() {
        return endpoint;
    }

    /** Blocks until a subscriber's subscription message arrives; unsubscriptions of departed ones are skipped. */
    public void awaitSubscriber() {
        while (true) {
            byte[] msg = socket.recv(0);
            if (msg == null || msg.length == 0) {
                throw new AssertionError("no subscription arrived at " + endpoint);
            }
            if (msg[0] == 1) {
                return;
            }
        }
    }

    /** Blocks until a subscriber goes away: its connection closed, which the XPUB reports as an unsubscription. */
    public void awaitUnsubscribe() {
        while (true) {
            byte[] msg = socket.recv(0);
            if (msg == null) {
                throw new AssertionError("no subscriber left " + endpoint);
            }
            if (msg.length > 0 && msg[0] == 0) {
                return;
            }
        }
    }

    /** One live message: topic, 8-byte big-endian seq, payload. */
    public void publish(String topic, long seq, byte[] payload) {
        sendFrames(topic.getBytes(StandardCharsets.UTF_8), LiveFrames.seqFrame(seq), payload);
    }

    public void sendFrames(byte[]... frames) {
        for (int i = 0; i < frames.length; i++) {
            socket.send(frames[i], i < frames.length - 1 ? ZMQ.SNDMORE : 0);
        }
    }

    @Override
    public void close() {
        ctx.close();
    }
}
