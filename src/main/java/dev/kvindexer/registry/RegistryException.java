package dev.kvindexer.registry;

/** A registration request the registry refuses; carries the HTTP status and the reference's message text. */
public final class RegistryException extends Exception {
    private final int status;

    public RegistryException(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public int status() {
        return status;
    }
}
