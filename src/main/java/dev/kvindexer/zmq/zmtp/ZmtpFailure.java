package dev.kvindexer.zmq.zmtp;

/** Why a connection to a publisher ended or could not be made; the subscriber tries again in every case. */
public sealed interface ZmtpFailure {
    /** One line for a log or a listener's last_error. */
    String describe();

    /** A short name for the kind of failure, the label of {@code kvindexer_ingest_disconnects_total{reason}}. */
    String reason();

    /** Whether the peer sent what ZMTP or the limits forbid, rather than going away or never answering. */
    default boolean peerMisbehaved() {
        return false;
    }

    /** Whether to wait the protocol-error delay before trying again, rather than the short reconnect back-off. */
    default boolean slowRetry() {
        return peerMisbehaved();
    }

    /** The endpoint's host name does not resolve: no publisher can be tried until it does. */
    record Unresolvable(String detail) implements ZmtpFailure {
        @Override
        public String reason() {
            return "unresolvable";
        }

        @Override
        public String describe() {
            return "cannot connect: cannot resolve: " + detail;
        }
    }

    /** No publisher could be reached: nothing listens, or no handshake came in time. */
    record Unreachable(String detail) implements ZmtpFailure {
        @Override
        public String reason() {
            return "unreachable";
        }

        @Override
        public String describe() {
            return "cannot connect: " + detail;
        }
    }

    /** An established connection ended: the peer closed it, an I/O error, or it fell silent. */
    record Lost(String detail) implements ZmtpFailure {
        @Override
        public String reason() {
            return "lost";
        }

        @Override
        public String describe() {
            return "connection lost: " + detail;
        }
    }

    /** The peer broke the protocol or is no publisher. */
    record BrokenProtocol(String detail) implements ZmtpFailure {
        @Override
        public String reason() {
            return "protocol";
        }

        @Override
        public String describe() {
            return "malformed ZMTP: " + detail;
        }

        @Override
        public boolean peerMisbehaved() {
            return true;
        }
    }

    /** A message over the size limit, refused from its frame header before any of it was buffered. */
    record TooLarge(long declaredBytes, long bytesBefore, long limit) implements ZmtpFailure {
        @Override
        public String reason() {
            return "too_large";
        }

        @Override
        public String describe() {
            return "a message over " + limit + " bytes (a frame declares " + Long.toUnsignedString(declaredBytes)
                    + " bytes" + (bytesBefore > 0 ? " after " + bytesBefore + " bytes of the message" : "") + ")";
        }

        @Override
        public boolean peerMisbehaved() {
            return true;
        }
    }

    /**
     * What arrived could not be held: the node's budget for bytes held on behalf of the network is spent (by this
     * connection's message under way, or by everyone together). Not the peer's fault necessarily, but retried only
     * after the protocol-error delay, so a full node is not asked again at once.
     */
    record OverBudget(long holding, long wanted, long budget) implements ZmtpFailure {
        @Override
        public String reason() {
            return "budget";
        }

        @Override
        public String describe() {
            return "the node's network budget (" + budget + " bytes, --max-network-memory) cannot hold " + wanted
                    + " more bytes" + (holding > 0 ? " beside the " + holding + " this connection holds" : "");
        }

        @Override
        public boolean slowRetry() {
            return true;
        }
    }

    /** A frame or message begun and not finished within the deadline: a byte now and then does not keep it alive. */
    record Stalled(String what, long deadlineMillis) implements ZmtpFailure {
        @Override
        public String reason() {
            return "stalled";
        }

        @Override
        public String describe() {
            return what + " not whole within " + deadlineMillis + " ms of its first byte";
        }

        @Override
        public boolean peerMisbehaved() {
            return true;
        }
    }

    /** The peer reads nothing we send: the replies we owe it (PONGs) outgrew what one connection may queue. */
    record Unread(long queuedBytes) implements ZmtpFailure {
        @Override
        public String reason() {
            return "unread";
        }

        @Override
        public String describe() {
            return "the peer reads nothing: " + queuedBytes + " bytes of heartbeat replies queued for it";
        }

        @Override
        public boolean peerMisbehaved() {
            return true;
        }
    }
}
