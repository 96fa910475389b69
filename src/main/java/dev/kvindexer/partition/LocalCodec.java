package dev.kvindexer.partition;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageCodec;

/**
 * Passes immutable messages by reference inside one JVM; without a codec Vert.x would refuse or copy them.
 * These messages never cross the cluster, so wire encoding is unsupported on purpose.
 */
public final class LocalCodec<T> implements MessageCodec<T, T> {
    private final String name;

    private LocalCodec(Class<T> type) {
        this.name = "local:" + type.getName();
    }

    public static <T> void register(EventBus bus, Class<T> type) {
        bus.registerDefaultCodec(type, new LocalCodec<>(type));
    }

    /** Registers the local codec for every message type of the partition protocol. */
    public static void registerAll(EventBus bus) {
        register(bus, PartitionMessages.OpenStream.class);
        register(bus, PartitionMessages.ApplyBatch.class);
        register(bus, PartitionMessages.ReplayedBatch.class);
        register(bus, PartitionMessages.ReplayFinished.class);
        register(bus, PartitionMessages.RemoveStreams.class);
        register(bus, PartitionMessages.Recovered.class);
        register(bus, PartitionMessages.Query.class);
        register(bus, PartitionMessages.QueryReply.class);
        register(bus, PartitionMessages.TieredQuery.class);
        register(bus, PartitionMessages.TieredReply.class);
        register(bus, PartitionMessages.ApplyStandardEvents.class);
        register(bus, PartitionMessages.StandardEventsApplied.class);
        register(bus, PartitionMessages.Dump.class);
        register(bus, PartitionMessages.DumpReply.class);
        register(bus, PartitionMessages.Stats.class);
        register(bus, PartitionMessages.StatsReply.class);
    }

    @Override
    public void encodeToWire(Buffer buffer, T t) {
        throw new UnsupportedOperationException("local-only message " + name);
    }

    @Override
    public T decodeFromWire(int pos, Buffer buffer) {
        throw new UnsupportedOperationException("local-only message " + name);
    }

    @Override
    public T transform(T t) {
        return t;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public byte systemCodecID() {
        return -1;
    }
}
