package dev.kvindexer.web;

import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/** Lets a request through only with {@code Authorization: Bearer <token>}; any other gets 401 and goes no further. */
public final class BearerAuth implements Handler<RoutingContext> {
    private static final String SCHEME = "Bearer ";
    private final byte[] expected;

    public BearerAuth(String token) {
        this.expected = token.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void handle(RoutingContext ctx) {
        String header = ctx.request().getHeader("authorization");
        if (accepts(header)) {
            ctx.next();
            return;
        }
        boolean bearer = isBearer(header);
        ctx.response().putHeader("www-authenticate", "Bearer realm=\"kvindexer\"");
        Responses.error(ctx, 401, bearer ? "invalid bearer token" : "this route needs `Authorization: Bearer <token>`");
    }

    /** Whether an {@code Authorization} header value (or null) carries the token; the gRPC port asks the same. */
    public boolean accepts(String header) {
        // Constant time, so the answer's timing does not reveal how much of a guess was right.
        return isBearer(header)
                && MessageDigest.isEqual(
                        expected, header.substring(SCHEME.length()).trim().getBytes(StandardCharsets.UTF_8));
    }

    public static boolean isBearer(String header) {
        return header != null && header.regionMatches(true, 0, SCHEME, 0, SCHEME.length());
    }
}
