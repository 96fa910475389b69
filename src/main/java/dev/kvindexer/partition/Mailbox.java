package dev.kvindexer.partition;

import io.vertx.core.Context;
import io.vertx.core.Promise;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The partition actor's queue: commands in the order they were sent, taken on the actor's context in turns. A turn is
 * scheduled only when none is pending, so a burst of batches costs the actor's event loop one wake-up, not one each.
 */
final class Mailbox {
    /** A command and where its answer goes: null when the sender wants none. */
    record Letter(PartitionCommand command, Promise<Object> answer) {}

    private final ConcurrentLinkedQueue<Letter> letters = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean turnPending = new AtomicBoolean();
    /** The actor's context and its turn once it runs; letters wait until then. */
    private volatile Context actor;

    private volatile Runnable turn;

    void add(Letter letter) {
        letters.add(letter);
        schedule();
    }

    /** The actor runs: letters sent before it started are taken from here on. */
    void open(Context actor, Runnable turn) {
        this.turn = turn;
        this.actor = actor;
        schedule();
    }

    /**
     * Called first in a turn: a letter added from here on schedules the next one, so none is left waiting after a turn
     * that missed it.
     */
    void turnBegins() {
        turnPending.set(false);
    }

    /** Another turn, for the letters a turn left to keep the event loop fair to its other work. */
    void schedule() {
        Context c = actor;
        if (c != null && !letters.isEmpty() && turnPending.compareAndSet(false, true)) {
            c.runOnContext(ignored -> turn.run());
        }
    }

    Letter peek() {
        return letters.peek();
    }

    Letter poll() {
        return letters.poll();
    }
}
