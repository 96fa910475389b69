package dev.kvindexer.cluster;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.InternetProtocolFamily;
import io.vertx.core.datagram.DatagramSocketOptions;
import io.vertx.core.net.ClientOptionsBase;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.transport.Transport;
import java.net.SocketAddress;
import java.util.concurrent.ThreadFactory;

/**
 * Vert.x's NIO transport with {@link BusFrameGuard} on the clustered event bus server. Vert.x offers no option to
 * bound what the bus reads, but every server it opens passes through its transport before it binds, and the bus
 * server is the only one whose options are plain {@link NetServerOptions} (the bus builds them from its own options;
 * HTTP servers have {@code HttpServerOptions}). Everything else is the NIO transport's own.
 */
final class GuardedTransport implements Transport {
    private final io.vertx.core.spi.transport.Transport nio = Transport.NIO.implementation();
    private final BusFrameGuard guard;
    private final Guarded implementation = new Guarded();

    GuardedTransport(BusFrameGuard guard) {
        this.guard = guard;
    }

    @Override
    public String name() {
        return "nio";
    }

    @Override
    public boolean available() {
        return true;
    }

    @Override
    public Throwable unavailabilityCause() {
        return null;
    }

    @Override
    public io.vertx.core.spi.transport.Transport implementation() {
        return implementation;
    }

    private final class Guarded implements io.vertx.core.spi.transport.Transport {
        @Override
        public void configure(NetServerOptions options, boolean domainSocket, ServerBootstrap bootstrap) {
            nio.configure(options, domainSocket, bootstrap);
            if (options.getClass() == NetServerOptions.class) {
                bootstrap.handler(guard.acceptor());
            }
        }

        @Override
        public boolean supportsDomainSockets() {
            return nio.supportsDomainSockets();
        }

        @Override
        public boolean supportFileRegion() {
            return nio.supportFileRegion();
        }

        @Override
        public boolean isAvailable() {
            return nio.isAvailable();
        }

        @Override
        public Throwable unavailabilityCause() {
            return nio.unavailabilityCause();
        }

        @Override
        public SocketAddress convert(io.vertx.core.net.SocketAddress address) {
            return nio.convert(address);
        }

        @Override
        public io.vertx.core.net.SocketAddress convert(SocketAddress address) {
            return nio.convert(address);
        }

        @Override
        public IoHandlerFactory ioHandlerFactory() {
            return nio.ioHandlerFactory();
        }

        @Override
        public EventLoopGroup eventLoopGroup(int type, int threads, ThreadFactory factory, int ioRatio) {
            return nio.eventLoopGroup(type, threads, factory, ioRatio);
        }

        @Override
        public DatagramChannel datagramChannel() {
            return nio.datagramChannel();
        }

        @Override
        public DatagramChannel datagramChannel(InternetProtocolFamily family) {
            return nio.datagramChannel(family);
        }

        @Override
        public ChannelFactory<? extends Channel> channelFactory(boolean domainSocket) {
            return nio.channelFactory(domainSocket);
        }

        @Override
        public ChannelFactory<? extends ServerChannel> serverChannelFactory(boolean domainSocket) {
            return nio.serverChannelFactory(domainSocket);
        }

        @Override
        public void configure(DatagramChannel channel, DatagramSocketOptions options) {
            nio.configure(channel, options);
        }

        @Override
        public void configure(
                ClientOptionsBase options, int connectTimeout, boolean domainSocket, Bootstrap bootstrap) {
            nio.configure(options, connectTimeout, domainSocket, bootstrap);
        }
    }
}
