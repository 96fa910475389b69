package dev.kvindexer.zmq.zmtp;

import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * A bound endpoint ({@code tcp://*:port}): publishers connect to it, each accepted connection is a session of its
 * own, and a lost one is not made again here (its publisher reconnects).
 */
final class ZmtpAcceptor extends ZmtpEndpoint {
    /** Connections held at once; one publisher needs one, a restarting one briefly two. */
    static final int MAX_SESSIONS = 64;

    final ServerSocketChannel server;
    final List<ZmtpSession> accepted = new ArrayList<>(1);
    SelectionKey key;
    /** With accepting paused after a failed accept: System.nanoTime() to try again; else 0. */
    long acceptAgainAt;

    ZmtpAcceptor(String endpoint, Object attachment, ServerSocketChannel server) {
        super(endpoint, attachment);
        this.server = server;
    }

    @Override
    List<ZmtpSession> sessions() {
        return accepted;
    }
}
