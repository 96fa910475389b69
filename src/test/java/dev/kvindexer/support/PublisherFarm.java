package dev.kvindexer.support;

import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.wire.LiveFrames;
import java.util.List;
import java.util.StringJoiner;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Many engines' live publishers in a JVM of their own (its own descriptor limit), for a node to hold thousands of
 * listeners against: {@code ports} XPUBs on loopback, each expecting {@code subscribersPerPort} subscribers. Prints
 * {@code ports: p1,p2,...} once bound. A port whose subscribers have all arrived publishes a batch storing one block,
 * and again every five seconds, until the process is killed.
 *
 * <pre>java -cp ... dev.kvindexer.support.PublisherFarm ports subscribersPerPort blockSize</pre>
 */
public final class PublisherFarm {
    /** A repeat, for a subscriber that reconnected after the first; rare, as each costs every listener a batch. */
    private static final long REPEAT_NANOS = 5_000_000_000L;

    private PublisherFarm() {}

    public static void main(String[] args) throws InterruptedException {
        int ports = Integer.parseInt(args[0]);
        int perPort = Integer.parseInt(args[1]);
        int blockSize = Integer.parseInt(args[2]);
        try (ZContext ctx = new ZContext()) {
            ZMQ.Socket[] pubs = new ZMQ.Socket[ports];
            StringJoiner bound = new StringJoiner(",", "ports: ", "");
            for (int i = 0; i < ports; i++) {
                pubs[i] = ctx.createSocket(SocketType.XPUB);
                pubs[i].setLinger(0);
                pubs[i].setXpubVerbose(true);
                pubs[i].setSndHWM(0);
                pubs[i].bind("tcp://127.0.0.1:0");
                String endpoint = pubs[i].getLastEndpoint();
                bound.add(endpoint.substring(endpoint.lastIndexOf(':') + 1));
            }
            System.out.println(bound);
            System.out.flush();
            int[] subscribed = new int[ports];
            long[] seq = new long[ports];
            long[] nextAt = new long[ports];
            while (true) {
                long now = System.nanoTime();
                for (int i = 0; i < ports; i++) {
                    byte[] m;
                    while ((m = pubs[i].recv(ZMQ.DONTWAIT)) != null) {
                        subscribed[i] += m.length > 0 && m[0] == 1 ? 1 : 0;
                    }
                    if (subscribed[i] >= perPort && now - nextAt[i] >= 0) {
                        publish(pubs[i], i, seq[i]++, blockSize);
                        nextAt[i] = now + REPEAT_NANOS;
                    }
                }
                Thread.sleep(10);
            }
        }
    }

    /** A batch storing the port's one block: every subscriber of the port stores it for its own instance. */
    private static void publish(ZMQ.Socket pub, int port, long seq, int blockSize) {
        byte[] batch = BatchEncoder.batch(
                BatchEncoder.Format.VLLM_MAP,
                1.0,
                List.of(new EngineEvent.Store(
                        new long[] {1000 + port}, null, new int[blockSize], blockSize, null, null)),
                0);
        pub.sendMore(new byte[0]);
        pub.sendMore(LiveFrames.seqFrame(seq));
        pub.send(batch);
    }
}
