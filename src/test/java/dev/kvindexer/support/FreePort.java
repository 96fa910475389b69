package dev.kvindexer.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

/** A loopback TCP port that was free a moment ago, for a server that must be told its port before it binds. */
public final class FreePort {
    private FreePort() {
    }

    public static int any() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
