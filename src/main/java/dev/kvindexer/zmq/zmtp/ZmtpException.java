package dev.kvindexer.zmq.zmtp;

/** Ends a connection: the peer did what {@link #failure()} says. */
final class ZmtpException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient ZmtpFailure failure;

    ZmtpException(ZmtpFailure failure) {
        super(failure.describe(), null, false, false);
        this.failure = failure;
    }

    static ZmtpException broken(String detail) {
        return new ZmtpException(new ZmtpFailure.BrokenProtocol(detail));
    }

    ZmtpFailure failure() {
        return failure;
    }
}
