package dev.kvindexer.zmq.zmtp;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * Where a live endpoint in its ZMQ spelling points: a publisher to connect to over TCP, a TCP port to bind for
 * publishers that connect themselves, a Unix socket, or an in-process name that no other process can publish to.
 */
public sealed interface ZmtpAddress {
    /** {@code tcp://host:port}; an IPv6 address in brackets, a host name looked up on every connect. */
    record Tcp(String host, int port, boolean ipv6) implements ZmtpAddress {
        private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

        /** False when the host is an address already, which needs no lookup (and so cannot block). */
        public boolean needsLookup() {
            return !ipv6 && !IPV4.matcher(host).matches();
        }

        /**
         * The socket address to connect to. A name resolves to IPv4 where it has such an address, as a ZMQ socket
         * without its IPv6 option does; only a bracketed address means IPv6.
         */
        public InetSocketAddress resolve() throws UnknownHostException {
            if (!needsLookup()) {
                return new InetSocketAddress(InetAddress.getByName(host), port);
            }
            InetAddress[] all = InetAddress.getAllByName(host);
            for (InetAddress a : all) {
                if (a instanceof Inet4Address) {
                    return new InetSocketAddress(a, port);
                }
            }
            return new InetSocketAddress(all[0], port);
        }
    }

    /**
     * {@code tcp://*:port}: the subscriber binds and the publisher connects (docs/protocol/zmq.md#sockets-and-roles
     * bind mode).
     */
    record TcpBind(int port) implements ZmtpAddress {}

    /** {@code ipc://path}: a Unix domain socket, as libzmq publishers bind it. */
    record Ipc(Path path) implements ZmtpAddress {}

    /** {@code inproc://name}: exists only inside the process that binds it, so never reachable from here. */
    record InProcess(String name) implements ZmtpAddress {}

    /** The address of an endpoint; throws {@link IllegalArgumentException} for one that is not well formed. */
    static ZmtpAddress parse(String endpoint) {
        int sep = endpoint.indexOf("://");
        if (sep < 0) {
            throw new IllegalArgumentException("no scheme in " + endpoint);
        }
        String scheme = endpoint.substring(0, sep);
        String rest = endpoint.substring(sep + 3);
        return switch (scheme) {
            case "ipc" -> new Ipc(Path.of(rest));
            case "inproc" -> new InProcess(rest);
            case "tcp" -> tcp(endpoint, rest);
            default -> throw new IllegalArgumentException("unsupported scheme " + scheme + " in " + endpoint);
        };
    }

    private static ZmtpAddress tcp(String endpoint, String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("no TCP port in " + endpoint);
        }
        String host = hostPort.substring(0, colon);
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad TCP port in " + endpoint);
        }
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("bad TCP port in " + endpoint);
        }
        if (host.equals("*")) {
            return new TcpBind(port);
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            return new Tcp(host.substring(1, host.length() - 1), port, true);
        }
        return new Tcp(host, port, false);
    }
}
