package dev.kvindexer.recovery;

import dev.kvindexer.config.RecoveryConfig;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A peer's dump as recovery reads it: no more than {@link RecoveryConfig#maxBytes()} bytes and no longer than its
 * timeout, after which reads fail and the stream is closed under a blocked reader.
 */
final class LimitedStream extends FilterInputStream {
    private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kvindexer-recovery-deadline");
        t.setDaemon(true);
        return t;
    });

    private final RecoveryConfig limits;
    private final long deadline;
    private final ScheduledFuture<?> closer;
    private long read;
    private volatile boolean timedOut;

    LimitedStream(InputStream in, RecoveryConfig limits) {
        super(in);
        this.limits = limits;
        this.deadline = System.nanoTime() + limits.timeout().toNanos();
        this.closer = DEADLINES.schedule(
                () -> {
                    timedOut = true;
                    try {
                        in.close();
                    } catch (IOException | RuntimeException ignored) {
                        // The reader learns of the deadline from its next read.
                    }
                },
                limits.timeout().toMillis(),
                TimeUnit.MILLISECONDS);
    }

    @Override
    public int read() throws IOException {
        check(1);
        int b = super.read();
        if (b >= 0) {
            read++;
        }
        return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        check(len);
        int n = super.read(b, off, (int) Math.min(len, limits.maxBytes() - read + 1));
        if (n > 0) {
            read += n;
            if (read > limits.maxBytes()) {
                throw tooLarge();
            }
        }
        return n;
    }

    private void check(int wanted) throws IOException {
        if (timedOut || System.nanoTime() - deadline > 0) {
            timedOut = true;
            throw timeout();
        }
        if (wanted > 0 && read >= limits.maxBytes() + 1) {
            throw tooLarge();
        }
    }

    private IOException tooLarge() {
        return new IOException("the peer's dump is larger than --recovery-max-bytes (" + limits.maxBytes() + " bytes)");
    }

    private IOException timeout() {
        return new IOException("the peer's dump did not arrive within --recovery-timeout ("
                + limits.timeout().toSeconds() + " s)");
    }

    /** What a failure while reading means: the deadline when it passed, else the failure itself. */
    IOException explain(IOException e) {
        return timedOut ? timeout() : e;
    }

    @Override
    public void close() throws IOException {
        closer.cancel(false);
        super.close();
    }
}
