package dev.kvindexer.http;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.Set;

/**
 * An API that answers msgpack requests on the routes the JSON APIs share, plugged in by the node: the C++ Mooncake
 * Conductor's (docs/api/mooncake-cpp.md). A msgpack body on {@code /query}, {@code /register} or {@code /unregister}
 * is its request; a GET of {@link #routes()} that asks for msgpack is answered by it.
 */
public interface MsgpackApi {
    /** Its routes: a wrong method on one of them is its own 405 to a client that speaks msgpack. */
    Set<String> routes();

    /**
     * Answers a {@code /query} from its whole body, its errors included; it throws nothing, so a body can be answered
     * ahead of the router ({@code DirectRoute}) as well as on it.
     */
    void query(Buffer body, HttpServerResponse response);

    void register(RoutingContext ctx);

    void unregister(RoutingContext ctx);

    /** {@code GET /services} in its encoding. */
    void services(RoutingContext ctx);

    void globalView(RoutingContext ctx);

    /** Its 405 for a wrong method on one of {@link #routes()}. */
    void methodNotAllowed(RoutingContext ctx);

    /** Its registrations as the Mooncake JSON API's {@code GET /services} lists them after its own. */
    Future<List<ServiceRow>> serviceRows();

    /**
     * One registered rank in the Go Conductor's {@code GET /services} shape; null members are written as {@code ""}.
     */
    record ServiceRow(
            String endpoint,
            String replayEndpoint,
            String type,
            String modelName,
            String loraName,
            String tenantId,
            String instanceId,
            long blockSize,
            int dpRank,
            String additionalSalt) {}
}
