package dev.kvindexer.cluster;

import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.net.NetworkBudget;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks what arrives on every event-bus connection before Vert.x reads it. Vert.x reads a frame (a 32-bit length,
 * then that many bytes) into one buffer of the declared size, with no bound of its own, so a stranger declaring two
 * gigabytes and sending zeros fills the heap. Here a frame must declare 1 to {@link #limit} bytes; the frames all
 * connections are part-way through may hold no more than {@link #limit} bytes between them, each byte reserved from
 * the node's network budget as it arrives; and a frame begun must be whole within the message timeout plus a second
 * for every {@link #ALLOWANCE_BYTES_PER_SECOND} it declares (a snapshot of gigabytes takes its time), however slowly
 * its bytes trickle. Inside a frame, every length Vert.x allocates by (the envelope's strings, a body's payload) must
 * fit in the frame ({@link BusMessageCheck}). Otherwise the connection is closed, counted and logged. Under TLS the
 * check sits behind the decryption, where it also counts the handshakes it refused.
 */
final class BusFrameGuard {
    private static final Logger LOG = LoggerFactory.getLogger(BusFrameGuard.class);
    static final String PORT = "bus";
    static final String FRAME_SIZE = "frame_size";
    static final String BUSY = "busy";
    static final String TLS_HANDSHAKE = "tls_handshake";
    static final String STALLED = "stalled";
    static final String BUDGET = "budget";
    static final String MESSAGE = "message";
    /** The slowest a peer may send a large frame: a second more of its deadline for every this many bytes. */
    static final long ALLOWANCE_BYTES_PER_SECOND = 1 << 20;
    /** Above every message but a snapshot: a query carries at most the hashes of one 8 MiB /query body. */
    static final int FLOOR = 64 << 20;
    /** What a snapshot's message holds besides the snapshot: addresses, headers, document framing, seal. */
    static final int ENVELOPE = 1 << 20;

    private static final String HANDLER = "kvindexer.busFrames";

    private final int limit;
    private final boolean tls;
    private final ClusterCounters counters;
    private final NetworkBudget budget;
    private final long frameTimeoutNanos;
    private final RefusalLog log = new RefusalLog(LOG);
    /** Bytes of frames received in part, on all connections together. */
    private final AtomicLong partial = new AtomicLong();

    BusFrameGuard(int limit, boolean tls, ClusterCounters counters, NetworkBudget budget, Duration frameTimeout) {
        this.limit = limit;
        this.tls = tls;
        this.counters = counters;
        this.budget = budget;
        this.frameTimeoutNanos = frameTimeout.toNanos();
    }

    BusFrameGuard(int limit, boolean tls, ClusterCounters counters) {
        this(limit, tls, counters, NetworkBudget.unbounded(), Duration.ofDays(1));
    }

    /**
     * The largest bus message a node takes: a snapshot larger than {@code recoveryMaxBytes} is refused once read
     * anyway, and one over a quarter of the heap could not be read and parsed beside the index; never below
     * {@link #FLOOR}, so queries always pass.
     */
    static int limit(long recoveryMaxBytes, long maxHeap) {
        long wanted = Math.max(FLOOR, Math.min(recoveryMaxBytes + ENVELOPE, maxHeap / 4));
        return (int) Math.min(wanted, Integer.MAX_VALUE - 8);
    }

    int limit() {
        return limit;
    }

    /** Bytes of partly received frames held now, on all connections. */
    long partialBytes() {
        return partial.get();
    }

    /** For the bus server's listening channel: puts the check on every connection it accepts. */
    ChannelHandler acceptor() {
        return new Acceptor();
    }

    @ChannelHandler.Sharable
    private final class Acceptor extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof Channel accepted) {
                accepted.pipeline().addFirst(new Placement());
            }
            ctx.fireChannelRead(msg);
        }
    }

    /**
     * Vert.x builds a connection's pipeline after it is accepted; once the connection is active the pipeline is
     * there, and the check goes in behind the TLS handler, or first without TLS.
     */
    private final class Placement extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ChannelPipeline pipeline = ctx.pipeline();
            ChannelHandlerContext ssl = pipeline.context(SslHandler.class);
            if (tls && ssl == null) {
                // Never read a bus connection unguarded: a Vert.x that builds its pipeline otherwise fails loudly.
                LOG.error(
                        "an event bus connection from {} has no TLS handler; closing it",
                        ctx.channel().remoteAddress());
                ctx.close();
                return;
            }
            pipeline.addAfter(ssl != null ? ssl.name() : ctx.name(), HANDLER, new FrameCheck());
            ctx.fireChannelActive();
            pipeline.remove(this);
        }
    }

    private final class FrameCheck extends ChannelInboundHandlerAdapter {
        private final BusMessageCheck message = new BusMessageCheck();
        private int headerBytes;
        private int length;
        private long remaining;
        /** Bytes of the frame in progress, counted in {@link #partial} and reserved from the budget. */
        private long held;

        private boolean closed;
        /** Frames begun on this connection, and System.nanoTime() when the one in progress began. */
        private long frames;

        private long frameStarted;
        private int frameDeclared;
        private boolean deadlineSet;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof ByteBuf buf)) {
                ctx.fireChannelRead(msg);
                return;
            }
            if (closed) {
                buf.release();
                return;
            }
            long before = held;
            if (!followFrames(ctx, buf, before)) {
                return;
            }
            long grown = held - before;
            if (grown > 0 && !reserve(ctx, buf, before, grown)) {
                return;
            }
            ctx.fireChannelRead(msg);
            if (grown < 0) {
                partial.addAndGet(grown);
                budget.release(-grown);
            }
            if (remaining > 0 && !deadlineSet) {
                watch(ctx, frames, frameStarted, frameDeclared);
            }
        }

        /**
         * Reads the frame headers in {@code buf} and counts the bytes of the frame under way; false, the connection
         * closed, when a header declares a size out of bounds.
         */
        private boolean followFrames(ChannelHandlerContext ctx, ByteBuf buf, long before) {
            for (int i = buf.readerIndex(), end = buf.writerIndex(); i < end; ) {
                if (remaining > 0) {
                    int n = (int) Math.min(remaining, end - i);
                    if (!message.done()) {
                        int stopped = message.consume(buf, i, i + n);
                        if (stopped < 0) {
                            refuse(ctx, buf, before, MESSAGE, message.problem());
                            return false;
                        }
                        n = stopped - i;
                    }
                    remaining -= n;
                    held = remaining == 0 ? 0 : held + n;
                    i += n;
                    if (remaining == 0 && !message.completeAtEnd()) {
                        refuse(ctx, buf, before, MESSAGE, message.problem());
                        return false;
                    }
                    continue;
                }
                length = (length << 8) | (buf.getByte(i++) & 0xff);
                if (++headerBytes == 4) {
                    int declared = length;
                    headerBytes = 0;
                    length = 0;
                    if (declared < 1 || declared > limit) {
                        refuse(
                                ctx,
                                buf,
                                before,
                                FRAME_SIZE,
                                "a frame declaring " + declared + " bytes (limit " + limit + ")");
                        return false;
                    }
                    remaining = declared;
                    message.begin(declared);
                    held = 0;
                    frames++;
                    frameStarted = System.nanoTime();
                    frameDeclared = declared;
                }
            }
            return true;
        }

        /**
         * Holds {@code grown} more bytes of a frame in part, in {@link #partial} and from the budget; false, the
         * connection closed, when either cannot take them.
         */
        private boolean reserve(ChannelHandlerContext ctx, ByteBuf buf, long before, long grown) {
            if (partial.addAndGet(grown) > limit) {
                partial.addAndGet(-grown);
                refuse(
                        ctx,
                        buf,
                        before,
                        BUSY,
                        "frames in progress on all bus connections would hold over " + limit + " bytes");
                return false;
            }
            if (!budget.tryReserve(grown, before)) {
                partial.addAndGet(-grown);
                budget.refused(NetworkBudget.BUS);
                refuse(ctx, buf, before, BUDGET, "the node's network budget (--max-network-memory) is full");
                return false;
            }
            return true;
        }

        /** Closes the connection if frame number {@code frame} is still under way at its deadline. */
        private void watch(ChannelHandlerContext ctx, long frame, long started, int declared) {
            deadlineSet = true;
            long allowed = frameTimeoutNanos + TimeUnit.SECONDS.toNanos(declared / ALLOWANCE_BYTES_PER_SECOND);
            long delay = Math.max(0, started + allowed - System.nanoTime());
            ctx.executor()
                    .schedule(
                            () -> {
                                deadlineSet = false;
                                if (closed || remaining == 0) {
                                    return;
                                }
                                if (frames == frame) {
                                    refuse(
                                            ctx,
                                            null,
                                            held,
                                            STALLED,
                                            "a frame of " + declared + " bytes not whole within "
                                                    + TimeUnit.NANOSECONDS.toMillis(allowed) + " ms of its first byte");
                                } else {
                                    watch(ctx, frames, frameStarted, frameDeclared);
                                }
                            },
                            delay,
                            TimeUnit.NANOSECONDS);
        }

        private void refuse(ChannelHandlerContext ctx, ByteBuf buf, long heldBefore, String reason, String what) {
            closed = true;
            partial.addAndGet(-heldBefore);
            budget.release(heldBefore);
            held = 0;
            if (buf != null) {
                buf.release();
            }
            counters.refusedConnection(PORT, reason);
            log.refused(
                    reason,
                    "closed the event bus connection from {}: {} (counted in "
                            + "kvindexer_cluster_connections_refused_total)",
                    ctx.channel().remoteAddress(),
                    what);
            ctx.close();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
            if (event instanceof SslHandshakeCompletionEvent done && !done.isSuccess()) {
                counters.refusedConnection(PORT, TLS_HANDSHAKE);
                log.refused(
                        TLS_HANDSHAKE,
                        "refused an event bus connection from {}: its TLS handshake failed ({}); "
                                + "only nodes with this cluster's --auth-token can connect (counted in "
                                + "kvindexer_cluster_connections_refused_total)",
                        ctx.channel().remoteAddress(),
                        String.valueOf(done.cause()));
            }
            ctx.fireUserEventTriggered(event);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            partial.addAndGet(-held);
            budget.release(held);
            held = 0;
            ctx.fireChannelInactive();
        }
    }
}
