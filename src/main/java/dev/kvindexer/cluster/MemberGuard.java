package dev.kvindexer.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.instance.EndpointQualifier;
import com.hazelcast.instance.impl.DefaultNodeContext;
import com.hazelcast.instance.impl.DefaultNodeExtension;
import com.hazelcast.instance.impl.HazelcastInstanceFactory;
import com.hazelcast.instance.impl.Node;
import com.hazelcast.instance.impl.NodeExtension;
import com.hazelcast.internal.networking.Channel;
import com.hazelcast.internal.networking.ChannelInitializer;
import com.hazelcast.internal.networking.InboundHandler;
import com.hazelcast.internal.server.ServerConnection;
import com.hazelcast.internal.server.ServerContext;
import com.hazelcast.spi.impl.executionservice.ExecutionService;
import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.net.NetworkBudget;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Hazelcast member whose member connections are bounded ({@link CappedPacketDecoder}): what one packet may
 * declare, before and after the member handshake; how long an accepted connection may go without that handshake; and
 * how many may wait for it at once, each reserving its socket buffers from the node's network budget, so a crowd of
 * strangers is refused at the door instead of filling the heap. The open-source edition has no setting for any of
 * these, so they go in through Hazelcast's node extension, an internal API pinned by the Vert.x BOM's Hazelcast
 * version; {@code MemberGuardTest} fails if an upgrade bypasses it.
 */
final class MemberGuard {
    private static final Logger LOG = LoggerFactory.getLogger(MemberGuard.class);
    static final String PORT = "member";
    static final String PACKET_SIZE = "packet_size";
    static final String NO_HANDSHAKE = "no_handshake";
    static final String INVALID = "invalid_packet";
    static final String CROWDED = "pending";
    /**
     * Accepted connections waiting for their member handshake at once: a cluster's members each open one, so this
     * is room for a few dozen joining together; a crowd beyond is strangers.
     */
    static final int MAX_PENDING = 64;
    /** What one connection holds before its handshake: Hazelcast's receive and send buffers (128 KiB each). */
    static final long PENDING_BYTES = 256 * 1024;
    /** A member handshake is a few hundred bytes: its addresses, its id and a few options. */
    static final int BEFORE_HANDSHAKE = 64 * 1024;
    /** Members complete their handshake in milliseconds; anything else on the port is dropped after this. */
    static final int HANDSHAKE_SECONDS = 10;
    /** See {@link BusFrameGuard#FLOOR}: the same reasoning for one packet. */
    static final int FLOOR = 64 << 20;
    /** Hazelcast's property bounding the bytes of one migration or replica-sync chunk (one packet), in MB. */
    static final String CHUNK_PROPERTY = "hazelcast.partition.migration.chunks.max.migrating.data.in.mb";
    /** A chunk ends after the record that makes it exceed its size: room for that record and the packet around it. */
    static final int CHUNK_MARGIN = 16 << 20;

    private final int limit;
    private final ClusterCounters counters;
    private final NetworkBudget budget;
    private final RefusalLog log = new RefusalLog(LOG);
    private final LongAdder decoders = new LongAdder();
    /** Accepted connections without their member handshake yet, each holding {@link #PENDING_BYTES} of the budget. */
    private final Set<Channel> pending = ConcurrentHashMap.newKeySet();

    private volatile Node node;

    private MemberGuard(int limit, ClusterCounters counters, NetworkBudget budget) {
        this.limit = limit;
        this.counters = counters;
        this.budget = budget;
    }

    /**
     * Starts a member of {@code config}, with migration chunks set to fit the packet limit (unless the config sets
     * them, in which case the limit is raised to fit them instead).
     */
    static HazelcastInstance start(Config config, ClusterCounters counters, NetworkBudget budget) {
        return guard(config, counters, budget).startWith(config);
    }

    static MemberGuard guard(Config config, ClusterCounters counters) {
        return guard(config, counters, NetworkBudget.unbounded());
    }

    static MemberGuard guard(Config config, ClusterCounters counters, NetworkBudget budget) {
        int limit = limit(Runtime.getRuntime().maxMemory());
        String chunkMb = config.getProperty(CHUNK_PROPERTY);
        if (chunkMb == null) {
            config.setProperty(CHUNK_PROPERTY, Integer.toString(Math.max(1, (limit - CHUNK_MARGIN) >> 20)));
        } else {
            long chunk = (Long.parseLong(chunkMb.trim()) << 20) + CHUNK_MARGIN;
            limit = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(limit, chunk));
        }
        return new MemberGuard(limit, counters, budget);
    }

    /** The largest packet a member takes: a quarter of the heap, at least {@link #FLOOR}. */
    static int limit(long maxHeap) {
        return (int) Math.min(Integer.MAX_VALUE - 8, Math.max(FLOOR, maxHeap / 4));
    }

    HazelcastInstance startWith(Config config) {
        return HazelcastInstanceFactory.newHazelcastInstance(
                config, config.getInstanceName(), new DefaultNodeContext() {
                    @Override
                    public NodeExtension createNodeExtension(Node node) {
                        return new GuardedExtension(node);
                    }
                });
    }

    int limit() {
        return limit;
    }

    /** How many member connections got the bounded decoder. */
    long decoders() {
        return decoders.sum();
    }

    int limitFor(ServerConnection connection) {
        return connection.getRemoteUuid() == null ? BEFORE_HANDSHAKE : limit;
    }

    /** A member connection got the bounded decoder. */
    void decoderAdded() {
        decoders.increment();
    }

    /** Accepted connections waiting for their member handshake now. */
    int pendingCount() {
        return pending.size();
    }

    /**
     * A connection was accepted: it waits for its handshake within the count and the budget, or is refused at once;
     * one still without a handshake after {@link #HANDSHAKE_SECONDS} is closed.
     */
    void accepted(Channel channel) {
        for (Channel c : pending) {
            if (handshaken(c) || c.isClosed()) {
                handshakeDone(c);
            }
        }
        String crowded = pending.size() >= MAX_PENDING
                ? pending.size() + " connections already wait for their member handshake"
                : budget.tryReserve(PENDING_BYTES, 0) ? null : "the node's network budget is full";
        if (crowded != null) {
            if (pending.size() < MAX_PENDING) {
                budget.refused(NetworkBudget.MEMBER);
            }
            node.getNodeEngine()
                    .getExecutionService()
                    .execute(
                            ExecutionService.ASYNC_EXECUTOR,
                            () -> refuse(channel, CROWDED, "refused a connection before its handshake: " + crowded));
            return;
        }
        pending.add(channel);
        channel.addCloseListener(this::handshakeDone);
        node.getNodeEngine()
                .getExecutionService()
                .schedule(
                        () -> {
                            if (pending.contains(channel) && !handshaken(channel) && !channel.isClosed()) {
                                refuse(channel, NO_HANDSHAKE, "no member handshake within " + HANDSHAKE_SECONDS + " s");
                            }
                        },
                        HANDSHAKE_SECONDS,
                        TimeUnit.SECONDS);
    }

    /** The connection completed its handshake, or closed: it no longer waits, and its bytes go back. */
    void handshakeDone(Channel channel) {
        if (pending.remove(channel)) {
            budget.release(PENDING_BYTES);
        }
    }

    private static boolean handshaken(Channel channel) {
        Object c = channel.attributeMap().get(ServerConnection.class);
        return c instanceof ServerConnection connection && connection.getRemoteUuid() != null;
    }

    private void refuse(Channel channel, String reason, String what) {
        Object c = channel.attributeMap().get(ServerConnection.class);
        if (c instanceof ServerConnection connection) {
            refuse(connection, channel, reason, what);
            return;
        }
        counters.refusedConnection(PORT, reason);
        log.refused(
                reason,
                "closed the cluster member connection from {}: {} (counted in "
                        + "kvindexer_cluster_connections_refused_total)",
                channel.remoteSocketAddress(),
                what);
        try {
            channel.close();
        } catch (IOException alreadyGone) {
            // nothing else to release
        }
    }

    void refuse(ServerConnection connection, Channel channel, String reason, String what) {
        counters.refusedConnection(PORT, reason);
        log.refused(
                reason,
                "closed the cluster member connection from {}: {} (counted in "
                        + "kvindexer_cluster_connections_refused_total)",
                connection.getRemoteSocketAddress(),
                what);
        try {
            // Hazelcast's close takes effect once both its I/O threads next wake, seconds later when idle; the peer
            // is told now.
            channel.socket().shutdownOutput();
        } catch (IOException alreadyGone) {
            // closed below anyway
        }
        connection.close("kvindexer: " + what, null);
    }

    private final class GuardedExtension extends DefaultNodeExtension {
        GuardedExtension(Node node) {
            super(node);
            MemberGuard.this.node = node;
        }

        @Override
        public Function<EndpointQualifier, ChannelInitializer> createChannelInitializerFn(ServerContext context) {
            Function<EndpointQualifier, ChannelInitializer> inner = super.createChannelInitializerFn(context);
            return qualifier -> {
                ChannelInitializer initializer = inner.apply(qualifier);
                if (initializer == null) {
                    return null;
                }
                return channel -> {
                    initializer.initChannel(channel);
                    if (!channel.isClientMode()) {
                        accepted(channel);
                    }
                };
            };
        }

        @Override
        public InboundHandler[] createInboundHandlers(
                EndpointQualifier qualifier, ServerConnection connection, ServerContext context) {
            if (!EndpointQualifier.MEMBER.equals(qualifier)) {
                return super.createInboundHandlers(qualifier, connection, context);
            }
            return new InboundHandler[] {
                new CappedPacketDecoder(connection, node.getNodeEngine().getPacketDispatcher(), MemberGuard.this)
            };
        }
    }
}
