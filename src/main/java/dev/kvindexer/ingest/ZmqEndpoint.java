package dev.kvindexer.ingest;

/**
 * ZMQ endpoint validation as the reference's {@code validate_endpoint} (SPEC §7.12), plus the SPEC's
 * recommended port-range and non-empty-path checks.
 */
public final class ZmqEndpoint {
    private ZmqEndpoint() {
    }

    /** Returns null when valid, else the reason text used in {@code invalid ZMQ endpoint `ep`: reason}. */
    public static String invalidReason(String endpoint) {
        int sep = endpoint.indexOf("://");
        if (sep < 0) {
            return "missing scheme";
        }
        String scheme = endpoint.substring(0, sep);
        String rest = endpoint.substring(sep + 3);
        switch (scheme) {
            case "ipc":
            case "inproc":
                return rest.isEmpty() ? "missing " + scheme + " path" : null;
            case "tcp":
                return tcpReason(rest);
            default:
                return "unsupported scheme " + scheme;
        }
    }

    private static String tcpReason(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        int bracket = hostPort.lastIndexOf(']');
        if (colon < 0 || colon < bracket) {
            return "missing TCP port";
        }
        String host = hostPort.substring(0, colon);
        String port = hostPort.substring(colon + 1);
        if (host.isEmpty() || host.equals("[]")) {
            return "missing TCP host";
        }
        if (host.startsWith("[") != host.endsWith("]")) {
            return "malformed IPv6 host " + host;
        }
        if (port.isEmpty()) {
            return "missing TCP port";
        }
        if (port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9')
                || Integer.parseInt(port) > 65535) {
            return "invalid TCP port " + port;
        }
        return null;
    }

    /** The SUB binds instead of connecting when the registered host is {@code *} (SPEC §3.1 bind mode). */
    public static boolean bindsLocally(String endpoint) {
        return endpoint.startsWith("tcp://*:");
    }

    public static boolean isIpv6(String endpoint) {
        return endpoint.startsWith("tcp://[");
    }
}
