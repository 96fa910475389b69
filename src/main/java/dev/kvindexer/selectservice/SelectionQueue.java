package dev.kvindexer.selectservice;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.select.Chooser;
import dev.kvindexer.select.SelectionOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * Selections waiting for load to drop (docs/api/selection.md#queueing): per partition, first come first served, each let go when its
 * partition has an eligible rank under the threshold again. Runs on the service's context.
 */
final class SelectionQueue {
    private record Waiting(SelectionOptions options, long isl, Promise<Void> turn) {}

    private final Chooser chooser;
    private final Map<PartitionKey, ArrayDeque<Waiting>> queues = new HashMap<>();

    SelectionQueue(Chooser chooser) {
        this.chooser = chooser;
    }

    /** Completes at once when the partition can take this selection now, else when {@link #wake} lets it go. */
    Future<Void> turn(PartitionKey p, SelectionOptions options, long isl) {
        if (!chooser.overloaded(p, options)) {
            return Future.succeededFuture();
        }
        Promise<Void> turn = Promise.promise();
        queues.computeIfAbsent(p, k -> new ArrayDeque<>()).add(new Waiting(options, isl, turn));
        return turn.future();
    }

    /** Lets waiting selections go, in order, while their partition has a rank under the threshold. */
    void wake() {
        for (Map.Entry<PartitionKey, ArrayDeque<Waiting>> e : queues.entrySet()) {
            ArrayDeque<Waiting> q = e.getValue();
            while (!q.isEmpty() && !chooser.overloaded(e.getKey(), q.peek().options())) {
                q.poll().turn().complete();
            }
        }
    }

    int size() {
        return queues.values().stream().mapToInt(ArrayDeque::size).sum();
    }

    int size(PartitionKey p) {
        ArrayDeque<Waiting> q = queues.get(p);
        return q == null ? 0 : q.size();
    }

    /** The prompt tokens the partition's waiting selections carry together. */
    long islTokens(PartitionKey p) {
        ArrayDeque<Waiting> q = queues.get(p);
        return q == null ? 0 : q.stream().mapToLong(Waiting::isl).sum();
    }
}
