package dev.kvindexer.partition;

import dev.kvindexer.config.InexactStreamPolicy;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.Spans;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The actor of one partition: the only code that changes its {@link Partition}, in turns on one event loop. A turn
 * runs the changes waiting in a row under one hold of the write lock, so queries are let in between bursts, not
 * between every two batches.
 */
final class PartitionVerticle extends VerticleBase {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionVerticle.class);
    /** Letters a turn takes at most before it lets the event loop's other work run. */
    private static final int TURN_LETTERS = 256;
    /**
     * How long a run of changes holds the write lock before queries may read between them: well under the wait after
     * which a query queues on the actor instead ({@link LocalPartition#READ_WAIT_NANOS}).
     */
    private static final long HOLD_NANOS = 40_000;

    private final LocalPartition ref;
    private final Mailbox mailbox;
    private final Partition partition;
    private final MemoryBudget.Share memory;
    /** The letters of the current run whose askers wait, answered once the write lock is let go. */
    private final List<Mailbox.Letter> asked = new ArrayList<>();

    private final List<Object> answers = new ArrayList<>();

    PartitionVerticle(
            LocalPartition ref,
            EventCounters counters,
            Watermarks watermarks,
            Consumer<ReplayRequest> replays,
            MemoryBudget budget,
            InexactStreamPolicy inexactPolicy,
            Consumer<RepairRequest> repairs) {
        this.ref = ref;
        this.mailbox = ref.mailbox();
        this.partition =
                new Partition(ref.key(), ref.blockSize(), ref, counters, watermarks, replays, inexactPolicy, repairs);
        this.memory = budget.share();
    }

    @Override
    public Future<?> start() {
        // Counted from the start: an empty partition's arrays and actor are heap too.
        memory.changed(partition.index());
        ref.readable(partition);
        mailbox.open(context, this::turn);
        return Future.succeededFuture();
    }

    private void turn() {
        mailbox.turnBegins();
        if (ref.isStopped()) {
            return;
        }
        try {
            takeLetters();
        } finally {
            // Letters left by a full turn (or by an error thrown out of one) get a turn of their own.
            mailbox.schedule();
        }
    }

    private void takeLetters() {
        int taken = 0;
        while (taken < TURN_LETTERS) {
            Mailbox.Letter first = mailbox.poll();
            if (first == null) {
                return;
            }
            taken++;
            if (!first.command().changesIndex()) {
                // What only reads needs no lock here, on the one thread that changes the index.
                answer(first, run(first));
                continue;
            }
            // A change and the eviction it may cause hold the write lock.
            asked.clear();
            answers.clear();
            ref.writeLock().lock();
            try {
                long until = System.nanoTime() + HOLD_NANOS;
                Mailbox.Letter l = first;
                while (true) {
                    Object a = run(l);
                    memory.changed(partition.index());
                    if (l.answer() != null) {
                        asked.add(l);
                        answers.add(a);
                    }
                    Mailbox.Letter next = mailbox.peek();
                    if (next == null
                            || !next.command().changesIndex()
                            || taken >= TURN_LETTERS
                            || System.nanoTime() - until > 0) {
                        break;
                    }
                    l = mailbox.poll();
                    taken++;
                }
            } finally {
                ref.writeLock().unlock();
            }
            for (int i = 0; i < asked.size(); i++) {
                answer(asked.get(i), answers.get(i));
            }
            asked.clear();
            answers.clear();
        }
    }

    /** Runs one command: its answer, or the failure to pass on. */
    private Object run(Mailbox.Letter letter) {
        PartitionCommand command = letter.command();
        Spans.Open applying = null;
        if (command instanceof PartitionCommand.ApplyLive live) {
            ref.taken(live.heldBytes());
            if (live.trace() != null) {
                applying = live.trace().applying(partition.key().dumpKey());
            }
        } else if (command instanceof PartitionCommand.ApplyReplayed replayed) {
            ref.taken(replayed.heldBytes());
        }
        try {
            return command.runOn(partition);
        } catch (RuntimeException e) {
            if (applying != null) {
                applying.failed(e);
            }
            // A bug, never input: input is checked before it becomes a command. The asker hears of it at once.
            LOG.error(
                    "{} failed on {}",
                    command.getClass().getSimpleName(),
                    partition.key().dumpKey(),
                    e);
            return new Failed(e);
        } finally {
            if (applying != null) {
                applying.end();
            }
        }
    }

    private static void answer(Mailbox.Letter letter, Object answer) {
        if (letter.answer() == null) {
            return;
        }
        if (answer instanceof Failed f) {
            letter.answer().tryFail(f.cause());
        } else {
            letter.answer().tryComplete(answer);
        }
    }

    /** A command that threw, as its answer. */
    private record Failed(RuntimeException cause) {}

    @Override
    public Future<?> stop() {
        ref.readable(null); // queries from here on find no actor: the partition is gone
        memory.closed();
        ref.stopped();
        return Future.succeededFuture();
    }
}
