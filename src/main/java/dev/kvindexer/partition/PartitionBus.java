package dev.kvindexer.partition;

import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;

/**
 * Sends the partition protocol's messages. Partitions are per node and their messages have local codecs, so every
 * send is local-only: a clustered event bus then delivers in-JVM without asking Hazelcast who consumes the address.
 */
public final class PartitionBus {
    private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);

    private PartitionBus() {
    }

    public static void send(EventBus bus, String partitionAddress, Object message) {
        bus.send(partitionAddress, message, LOCAL);
    }

    public static <T> Future<Message<T>> request(EventBus bus, String partitionAddress, Object message) {
        return bus.request(partitionAddress, message, LOCAL);
    }
}
