package dev.kvindexer.partition;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;

/**
 * Passes the partition protocol's immutable commands and answers by reference inside one JVM; without a codec Vert.x
 * would refuse or copy them. They never cross the cluster, so wire encoding is unsupported on purpose.
 */
final class LocalCodec implements MessageCodec<Object, Object> {
    static final String NAME = "kvindexer.partition.local";

    @Override
    public void encodeToWire(Buffer buffer, Object o) {
        throw new UnsupportedOperationException(
                "local-only partition message " + o.getClass().getSimpleName());
    }

    @Override
    public Object decodeFromWire(int pos, Buffer buffer) {
        throw new UnsupportedOperationException("local-only partition message");
    }

    @Override
    public Object transform(Object o) {
        return o;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public byte systemCodecID() {
        return -1;
    }
}
