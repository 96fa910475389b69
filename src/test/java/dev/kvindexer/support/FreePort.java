package dev.kvindexer.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ThreadLocalRandom;

/** Loopback TCP ports that were free a moment ago, for servers that must be told their port before they bind. */
public final class FreePort {
    private FreePort() {}

    /**
     * The first of {@code span} consecutive loopback ports that were all free a moment ago, below the kernel's
     * ephemeral range (where outgoing connections take theirs) and picked at random, so that test JVMs running side by
     * side each get a range of their own.
     */
    public static int block(int span) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1000; attempt++) {
            int first = 10_000 + rnd.nextInt((32_000 - 10_000) / span) * span;
            if (allFree(first, span)) {
                return first;
            }
        }
        throw new IllegalStateException("no " + span + " consecutive free ports between 10000 and 32000");
    }

    private static boolean allFree(int first, int span) {
        for (int p = first; p < first + span; p++) {
            try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
                s.setReuseAddress(true);
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }

    /**
     * A loopback port bound and not listening, held until closed: connecting to it is refused, and nothing else on
     * the machine can listen on it meanwhile. For an endpoint that must stay unreachable.
     */
    public static Socket reserve() {
        Socket s = new Socket();
        try {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A loopback port that was free a moment ago, below the ephemeral range: a port the kernel hands out (port 0)
     * can be taken by any outgoing connection on the machine, or by a connection to itself, before the test's server
     * binds it.
     */
    public static int any() {
        return block(1);
    }

    /** {@code n} distinct ports, each as {@link #any()}. */
    public static int[] distinct(int n) {
        int[] ports = new int[n];
        for (int i = 0; i < n; i++) {
            int p;
            do {
                p = any();
            } while (contains(ports, i, p));
            ports[i] = p;
        }
        return ports;
    }

    private static boolean contains(int[] ports, int upTo, int p) {
        for (int i = 0; i < upTo; i++) {
            if (ports[i] == p) {
                return true;
            }
        }
        return false;
    }
}
