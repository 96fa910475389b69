package dev.kvindexer.ingest.zmtp;

/** Why a connection to a publisher ended or could not be made; the subscriber tries again in every case. */
public sealed interface ZmtpFailure {
    /** One line for a log or a listener's last_error. */
    String describe();

    /** Whether the peer sent what ZMTP or the limits forbid, rather than going away or never answering. */
    default boolean peerMisbehaved() {
        return false;
    }

    /** The endpoint's host name does not resolve: no publisher can be tried until it does. */
    record Unresolvable(String detail) implements ZmtpFailure {
        @Override
        public String describe() {
            return "cannot connect: cannot resolve: " + detail;
        }
    }

    /** No publisher could be reached: nothing listens, or no handshake came in time. */
    record Unreachable(String detail) implements ZmtpFailure {
        @Override
        public String describe() {
            return "cannot connect: " + detail;
        }
    }

    /** An established connection ended: the peer closed it, an I/O error, or it fell silent. */
    record Lost(String detail) implements ZmtpFailure {
        @Override
        public String describe() {
            return "connection lost: " + detail;
        }
    }

    /** The peer broke the protocol or is no publisher. */
    record BrokenProtocol(String detail) implements ZmtpFailure {
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
        public String describe() {
            return "a message over " + limit + " bytes (a frame declares " + Long.toUnsignedString(declaredBytes)
                    + " bytes" + (bytesBefore > 0 ? " after " + bytesBefore + " bytes of the message" : "") + ")";
        }

        @Override
        public boolean peerMisbehaved() {
            return true;
        }
    }
}
