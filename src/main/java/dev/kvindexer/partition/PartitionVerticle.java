package dev.kvindexer.partition;

import dev.kvindexer.partition.InFlightBatches;
import dev.kvindexer.metrics.EventCounters;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.function.Consumer;

/** The actor of one partition: the only code that touches its {@link Partition}, on one event loop. */
public final class PartitionVerticle extends VerticleBase {
    private final String address;
    private final Partition partition;
    private final InFlightBatches inFlight;
    private MessageConsumer<Object> consumer;

    public PartitionVerticle(PartitionKey key, int blockSize, long incarnation, EventCounters counters,
                             Watermarks watermarks, Consumer<ReplayRequest> replays, InFlightBatches inFlight) {
        this.address = Addresses.partition(incarnation);
        this.partition = new Partition(key, blockSize, address, counters, watermarks, replays);
        this.inFlight = inFlight;
    }

    @Override
    public Future<?> start() {
        // localConsumer: partitions are per node, and a clustered consumer would write every one into Hazelcast.
        consumer = vertx.eventBus().localConsumer(address, this::handle);
        return consumer.completion();
    }

    private void handle(Message<Object> msg) {
        Object body = msg.body();
        if (body instanceof PartitionMessages.ApplyBatch) {
            inFlight.taken();
            partition.onLive((PartitionMessages.ApplyBatch) body);
        } else if (body instanceof PartitionMessages.ReplayedBatch) {
            partition.onReplayed((PartitionMessages.ReplayedBatch) body);
        } else if (body instanceof PartitionMessages.ReplayFinished) {
            partition.onReplayFinished((PartitionMessages.ReplayFinished) body);
        } else if (body instanceof PartitionMessages.Recovered) {
            partition.recover((PartitionMessages.Recovered) body);
            msg.reply(Boolean.TRUE);
        } else if (body instanceof PartitionMessages.Query) {
            msg.reply(partition.query((PartitionMessages.Query) body));
        } else if (body instanceof PartitionMessages.TieredQuery q) {
            msg.reply(partition.tieredQuery(q));
        } else if (body instanceof PartitionMessages.OpenStream) {
            partition.openStream((PartitionMessages.OpenStream) body);
            msg.reply(Boolean.TRUE);
        } else if (body instanceof PartitionMessages.RemoveStreams) {
            partition.removeStreams((PartitionMessages.RemoveStreams) body);
            msg.reply(Boolean.TRUE);
        } else if (body instanceof PartitionMessages.ApplyStandardEvents) {
            msg.reply(partition.applyStandard((PartitionMessages.ApplyStandardEvents) body));
        } else if (body instanceof PartitionMessages.Stats) {
            msg.reply(partition.stats());
        } else if (body instanceof PartitionMessages.Dump) {
            msg.reply(new PartitionMessages.DumpReply(partition.dumpJson()));
        } else {
            msg.fail(400, "unknown partition message " + (body == null ? "null" : body.getClass().getSimpleName()));
        }
    }

    @Override
    public Future<?> stop() {
        return consumer == null ? Future.succeededFuture() : consumer.unregister();
    }
}
