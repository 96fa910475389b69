package dev.kvindexer.config;

import java.nio.file.Path;

/**
 * The access log (docs/api/dynamo.md#test-routes-log-reopening-access-log): one JSON line per request.
 *
 * @param file          where lines are appended; {@code POST /reopen_logs} reopens it after a rotation
 * @param traceIdHeader the request header whose value is the line's {@code trace_id}
 * @param localTime     {@code ts} in local time with its offset instead of UTC
 */
public record AccessLogConfig(Path file, String traceIdHeader, boolean localTime) {
    public static final String DEFAULT_TRACE_ID_HEADER = "x-trace-id";

    public AccessLogConfig {
        if (traceIdHeader == null || traceIdHeader.isBlank()) {
            throw new IllegalArgumentException("--trace-id-header must name a header");
        }
    }
}
