package dev.kvindexer.cli;

import dev.kvindexer.config.HttpConfig;
import picocli.CommandLine.Option;

/** Where a command's HTTP server listens and how long it waits for a client, the same in every command. */
final class HttpEdgeOptions {
    @Option(names = "--host", description = "HTTP bind address (env <PREFIX>HOST; default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", description = "HTTP port (env <PREFIX>PORT; default: ${DEFAULT-VALUE}).")
    int port;

    @Option(
            names = "--http-idle-timeout",
            paramLabel = "SECONDS",
            description = "Close an HTTP connection that has "
                    + "delivered no complete request head this long after it opened or last answered, silent or trickling "
                    + "bytes (env <PREFIX>HTTP_IDLE_TIMEOUT; default: ${DEFAULT-VALUE}).")
    long httpIdleTimeout;

    @Option(
            names = "--http-request-timeout",
            paramLabel = "SECONDS",
            description = "Answer 408 and close when a "
                    + "request's body has not all arrived this long after its headers "
                    + "(env <PREFIX>HTTP_REQUEST_TIMEOUT; default: ${DEFAULT-VALUE}).")
    long httpRequestTimeout;

    HttpConfig limits() {
        return HttpConfig.ofSeconds(httpIdleTimeout, httpRequestTimeout);
    }
}
