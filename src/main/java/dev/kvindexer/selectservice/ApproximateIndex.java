package dev.kvindexer.selectservice;

import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.select.Prompt;
import dev.kvindexer.select.SelectionConfig;
import io.vertx.core.Vertx;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The index of bookings when workers publish no KV events (docs/api/selection.md#startup-and-kv-indexing-modes, {@code DYN_ROUTER_USE_KV_EVENTS=false}):
 * a booked prompt's blocks are stored for its rank, as if the engine had reported them, and removed again after the
 * router TTL. Blocks booked twice are held twice and each copy leaves on its own TTL, so a block stays while any of
 * its bookings is recent. Runs on the service's context.
 */
final class ApproximateIndex implements BookedPrompts {
    private final Vertx vertx;
    private final IndexAccess index;
    private final long ttlMillis;
    /** Each rank's stream of standardized events, with the last event id used. */
    private final Map<String, long[]> streams = new HashMap<>();

    ApproximateIndex(Vertx vertx, IndexAccess index, SelectionConfig config) {
        this(vertx, index, config.approximateTtlMillis());
    }

    private ApproximateIndex(Vertx vertx, IndexAccess index, long ttlMillis) {
        this.vertx = vertx;
        this.index = index;
        this.ttlMillis = ttlMillis;
    }

    /** Records a booking's blocks on its rank; a prompt booked by its sequence hashes alone has none to record. */
    @Override
    public void booked(PartitionKey p, long workerId, int dpRank, Prompt prompt) {
        if (prompt.blockHashes().length == 0 || ttlMillis == 0) {
            return;
        }
        long[] engineHashes = prompt.sequenceHashes();
        apply(
                p,
                workerId,
                dpRank,
                new KvEvent.Stored(StorageTier.DEVICE, false, 0, engineHashes, prompt.blockHashes()));
        vertx.setTimer(
                ttlMillis, t -> apply(p, workerId, dpRank, new KvEvent.Removed(StorageTier.DEVICE, engineHashes)));
    }

    private void apply(PartitionKey p, long workerId, int dpRank, KvEvent event) {
        String stream = "select-approximate/" + Long.toUnsignedString(workerId) + "/" + dpRank;
        long id = ++streams.computeIfAbsent(stream, s -> new long[1])[0];
        index.apply(p, List.of(new StandardEvent(stream, id, workerId, dpRank, event)));
    }
}
