package dev.kvindexer.partition;

import dev.kvindexer.config.InexactStreamPolicy;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.Spans;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The actor of one partition: the only code that touches its {@link Partition}, on one event loop. */
final class PartitionVerticle extends VerticleBase {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionVerticle.class);

    private final LocalPartition ref;
    private final String address;
    private final Partition partition;
    private final MemoryBudget.Share memory;
    private MessageConsumer<PartitionCommand> consumer;

    PartitionVerticle(
            LocalPartition ref,
            EventCounters counters,
            Watermarks watermarks,
            Consumer<ReplayRequest> replays,
            MemoryBudget budget,
            InexactStreamPolicy inexactPolicy,
            Consumer<RepairRequest> repairs) {
        this.ref = ref;
        this.address = ref.address();
        this.partition =
                new Partition(ref.key(), ref.blockSize(), ref, counters, watermarks, replays, inexactPolicy, repairs);
        this.memory = budget.share();
    }

    @Override
    public Future<?> start() {
        // localConsumer: partitions are per node, and a clustered consumer would write every one into Hazelcast.
        consumer = vertx.eventBus().localConsumer(address, this::handle);
        // Counted from the start: an empty partition's arrays and actor are heap too.
        memory.changed(partition.index());
        ref.readable(partition);
        return consumer.completion();
    }

    private void handle(Message<PartitionCommand> msg) {
        PartitionCommand command = msg.body();
        Spans.Open applying = null;
        if (command instanceof PartitionCommand.ApplyLive live) {
            ref.taken(live.heldBytes());
            if (live.trace() != null) {
                applying = live.trace().applying(partition.key().dumpKey());
            }
        } else if (command instanceof PartitionCommand.ApplyReplayed replayed) {
            ref.taken(replayed.heldBytes());
        }
        Object answer;
        try {
            // A change and the eviction it may cause hold the write lock; what only reads needs none here, on the
            // one thread that changes the index.
            answer = command.changesIndex() ? ref.changing(() -> changed(command)) : command.runOn(partition);
        } catch (RuntimeException e) {
            if (applying != null) {
                applying.failed(e);
                applying.end();
            }
            // A bug, never input: input is checked before it becomes a command. The asker hears of it at once.
            LOG.error(
                    "{} failed on {}",
                    command.getClass().getSimpleName(),
                    partition.key().dumpKey(),
                    e);
            msg.fail(500, String.valueOf(e.getMessage()));
            return;
        }
        if (applying != null) {
            applying.end();
        }
        if (msg.replyAddress() != null) {
            msg.reply(answer, LocalPartition.LOCAL);
        }
    }

    private Object changed(PartitionCommand command) {
        Object answer = command.runOn(partition);
        memory.changed(partition.index());
        return answer;
    }

    @Override
    public Future<?> stop() {
        ref.readable(null); // queries from here on find no consumer: the partition is gone
        memory.closed();
        Future<Void> unregistered = consumer == null ? Future.succeededFuture() : consumer.unregister();
        return unregistered.andThen(done -> ref.stopped());
    }
}
