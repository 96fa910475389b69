package dev.kvindexer.node;

/**
 * The node's startup gate (docs/protocol/recovery.md#startup): closed, with a reason, until recovery and the
 * initial-workers wait are
 * done. Listeners connect and buffer while it is closed; /ready answers 503 with the reason.
 */
public final class ReadyGate {
    private volatile String closedReason;

    private ReadyGate(String closedReason) {
        this.closedReason = closedReason;
    }

    public static ReadyGate open() {
        return new ReadyGate(null);
    }

    public static ReadyGate closed(String reason) {
        return new ReadyGate(reason);
    }

    public boolean isOpen() {
        return closedReason == null;
    }

    /** Why the gate is closed, or null when it is open. */
    public String reason() {
        return closedReason;
    }

    public void waitingFor(String reason) {
        if (closedReason != null) {
            closedReason = reason;
        }
    }

    public void openGate() {
        closedReason = null;
    }
}
