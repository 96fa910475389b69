package dev.kvindexer.web;

import dev.kvindexer.config.AccessLogConfig;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.Json;
import io.vertx.ext.web.RoutingContext;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The access log (docs/api/dynamo.md#test-routes-log-reopening-access-log): one JSON object per answered request, {@code ts} (RFC 3339 with milliseconds),
 * {@code trace_id}, {@code method}, {@code path}, {@code model}, {@code status}, {@code duration_ms}. Event loops only
 * queue a line; one writer thread owns the file, so no event loop blocks on disk. A full queue drops lines (counted)
 * rather than slow requests down. No request and no failing disk stops the log: what UTF-8 cannot encode is escaped,
 * and a failed write is counted and the file opened again for the next line.
 */
public final class AccessLog implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AccessLog.class);
    private static final DateTimeFormatter TS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", Locale.ROOT);
    /** Queue markers, compared by identity. */
    private static final String REOPEN = new String("reopen");

    private static final String STOP = new String("stop");

    private final AccessLogConfig settings;
    private final ZoneId zone;
    private final BlockingQueue<String> queue = new ArrayBlockingQueue<>(65_536);
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong writeErrors = new AtomicLong();
    private final AtomicBoolean reopenRequested = new AtomicBoolean();
    private final Thread writer;
    /** The writer thread's; null after a failure or a reopen request, until the next line opens the file by name. */
    private BufferedWriter out;
    /** Whether the last write failed, so a failing disk is logged once, not once per line. */
    private boolean failing;

    private AccessLog(AccessLogConfig settings) throws IOException {
        this.settings = settings;
        this.zone = settings.localTime() ? ZoneId.systemDefault() : ZoneOffset.UTC;
        this.out = openFile();
        this.writer = new Thread(this::run, "kvindexer-access-log");
        writer.setDaemon(true);
        writer.start();
    }

    /** Opens (creates or appends to) the file now, so a bad path is a startup error. */
    public static AccessLog open(AccessLogConfig settings) throws IOException {
        return new AccessLog(settings);
    }

    private BufferedWriter openFile() throws IOException {
        return Files.newBufferedWriter(
                settings.file(),
                StandardCharsets.UTF_8,
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND,
                StandardOpenOption.WRITE);
    }

    /** Writes a line for the request once its answer has gone out. Call from the request's handler chain. */
    public void track(RoutingContext ctx) {
        long start = System.nanoTime();
        ctx.addBodyEndHandler(v -> answered(ctx.request(), JsonRequest.modelOf(ctx), start));
    }

    /** Writes the line of a request whose answer has gone out, which named {@code model} (or null). */
    void answered(HttpServerRequest request, String model, long startNanos) {
        double ms = (System.nanoTime() - startNanos) / 1_000_000.0;
        String line = encodable("{\"ts\":\"" + TS.format(OffsetDateTime.now(zone))
                + "\",\"trace_id\":" + quoted(request.getHeader(settings.traceIdHeader()))
                + ",\"method\":\"" + request.method().name()
                + "\",\"path\":" + Json.encode(request.path())
                + ",\"model\":" + quoted(model)
                + ",\"status\":" + request.response().getStatusCode()
                + ",\"duration_ms\":" + String.format(Locale.ROOT, "%.3f", ms) + "}");
        if (!queue.offer(line)) {
            dropped.incrementAndGet();
        }
    }

    private static String quoted(String s) {
        return s == null ? "null" : Json.encode(s);
    }

    /**
     * The line with every lone UTF-16 surrogate (a model name sent as the JSON {@code "m\\ud800"}, say) written as a
     * JSON escape: UTF-8 has no form for one, and the writer would fail on it. Client text only ever sits inside the
     * line's JSON strings, where the escape stands for the same character.
     */
    static String encodable(String line) {
        StringBuilder out = null;
        int n = line.length();
        for (int i = 0; i < n; i++) {
            char c = line.charAt(i);
            boolean pair = Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(line.charAt(i + 1));
            if (pair) {
                if (out != null) {
                    out.append(c).append(line.charAt(i + 1));
                }
                i++;
            } else if (Character.isSurrogate(c)) {
                if (out == null) {
                    out = new StringBuilder(n + 16).append(line, 0, i);
                }
                out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else if (out != null) {
                out.append(c);
            }
        }
        return out == null ? line : out.toString();
    }

    /**
     * Log rotation: the file is closed and opened again by name (POST /reopen_logs). Called on an event loop, so it
     * never waits: the marker only wakes the writer, and when the queue is full the writer is awake anyway and sees
     * the request before its next line.
     */
    public void reopen() {
        reopenRequested.set(true);
        queue.offer(REOPEN);
    }

    /** Lines dropped because the writer fell behind. */
    public long dropped() {
        return dropped.get();
    }

    /** Writes (or opens, or closes) of the file that failed. */
    public long writeErrors() {
        return writeErrors.get();
    }

    private void run() {
        try {
            while (true) {
                String line = queue.take();
                if (reopenRequested.getAndSet(false)) {
                    closeFile();
                }
                if (line == STOP) {
                    closeFile();
                    return;
                }
                if (line != REOPEN) {
                    write(line);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void write(String line) {
        try {
            if (out == null) {
                out = openFile();
            }
            out.write(line);
            out.write('\n');
            if (queue.isEmpty()) {
                out.flush();
            }
            if (failing) {
                LOG.info("access log {} is written again", settings.file());
                failing = false;
            }
        } catch (IOException | RuntimeException e) {
            failed(e);
            closeFile();
        }
    }

    /** Closes the file, flushing what is buffered; the next line opens it again by name. */
    private void closeFile() {
        if (out == null) {
            return;
        }
        try {
            out.close();
        } catch (IOException | RuntimeException e) {
            failed(e);
        }
        out = null;
    }

    private void failed(Exception e) {
        writeErrors.incrementAndGet();
        if (!failing) {
            LOG.warn(
                    "access log {} failed, lines are lost until it can be opened again: {}",
                    settings.file(),
                    e.toString());
            failing = true;
        }
    }

    /** Writes what is queued, then closes the file. */
    @Override
    public void close() {
        try {
            queue.put(STOP);
            writer.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
