package dev.kvindexer.zmq;

/**
 * ZMQ endpoint validation exactly as Dynamo's {@code validate_endpoint} (docs/api/dynamo.md#endpoint-validation): the same accepted forms, the same
 * first failing step and the same reason texts, so a registration gets the answer Dynamo would give.
 */
public final class ZmqEndpoint {
    private ZmqEndpoint() {}

    /** Null when valid, else Dynamo's whole refusal: {@code invalid ZMQ endpoint `ep`: reason}. */
    public static String invalidMessage(String endpoint) {
        String reason = invalidReason(endpoint);
        return reason == null ? null : "invalid ZMQ endpoint `" + endpoint + "`: " + reason;
    }

    /** Returns null when valid, else the reason text used in {@code invalid ZMQ endpoint `ep`: reason}. */
    public static String invalidReason(String endpoint) {
        int sep = endpoint.indexOf("://");
        if (sep < 0) {
            return "missing scheme";
        }
        String scheme = endpoint.substring(0, sep);
        String address = endpoint.substring(sep + 3);
        if (address.isEmpty()) {
            return "missing address";
        }
        return switch (scheme) {
            case "ipc", "inproc" -> null;
            case "tcp" -> tcpReason(address);
            default -> "unsupported scheme `" + scheme + "`";
        };
    }

    private static String tcpReason(String address) {
        int colon = address.lastIndexOf(':');
        if (colon < 0) {
            return "missing TCP port";
        }
        String host = address.substring(0, colon);
        if (host.isEmpty()) {
            return "missing TCP host";
        }
        if (host.startsWith("[")) {
            if (!host.endsWith("]")) {
                return "missing closing `]`";
            }
        } else if (host.indexOf(':') >= 0) {
            return "missing TCP port"; // an IPv6 address without brackets
        }
        String portError = u16Error(address.substring(colon + 1));
        return portError == null ? null : "invalid TCP port: " + portError;
    }

    /** Why Rust's {@code u16::from_str} refuses {@code text}, in its words, or null when it parses. */
    private static String u16Error(String text) {
        String digits = text.startsWith("+") ? text.substring(1) : text;
        if (text.isEmpty()) {
            return "cannot parse integer from empty string";
        }
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return "invalid digit found in string";
        }
        String significant = digits.replaceFirst("^0+(?=.)", "");
        if (significant.length() > 5 || Integer.parseInt(significant) > 65535) {
            return "number too large to fit in target type";
        }
        return null;
    }

    /**
     * The SUB binds instead of connecting when the registered host is {@code *} (docs/protocol/zmq.md#sockets-and-roles
     * bind mode).
     */
    public static boolean bindsLocally(String endpoint) {
        return endpoint.startsWith("tcp://*:");
    }

    public static boolean isIpv6(String endpoint) {
        return endpoint.startsWith("tcp://[");
    }
}
