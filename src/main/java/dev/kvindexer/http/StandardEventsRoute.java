package dev.kvindexer.http;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.StandardEventsApplied;
import dev.kvindexer.registry.InstanceIds;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonBinding;
import dev.kvindexer.web.JsonRequest;
import dev.kvindexer.web.Responses;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code POST /events}: standardized KV events (docs/protocol/events.md#standardized-kv-events) as JSON, for engines
 * that publish no ZMQ. The body is one
 * event or {@code {"events": [...]}}. Every event is checked before any is applied, so a bad one changes nothing;
 * then each partition applies its events in order under the stream rules (stale event_ids dropped, gaps counted and
 * reported). {@code backend_id} names a registered instance of the event's (model_name, tenant_id). A
 * {@code stored} event with {@code token_ids} is placed by the local hashes of its tokens (with its
 * {@code lora_name}), its {@code seq_hashes} and {@code parent_hash} linking the blocks as engine hashes; one without
 * is placed by its sequence hashes alone.
 */
public final class StandardEventsRoute {
    private final Registry registry;

    /** @param registry registered workers and the handles of their partitions */
    public StandardEventsRoute(Registry registry) {
        this.registry = registry;
    }

    /** What a request's events did: applied, dropped as stale, and the event-id gaps they showed. */
    record Applied(String status, int applied, int stale, long gaps) {}

    void post(RoutingContext ctx) {
        JsonObject[] listed =
                JsonBinding.bind(ctx, StandardEventRequests.Batch.class).events();
        JsonObject[] events =
                listed == null ? new JsonObject[] {JsonRequest.of(ctx).body()} : listed;
        if (events.length == 0) {
            throw new HttpError(422, "`events` is empty");
        }
        Map<PartitionRef, List<StandardEvent>> byPartition = new LinkedHashMap<>();
        // One at a time: the first bad event is the one named, and a refusal names its place in the list.
        for (int i = 0; i < events.length; i++) {
            try {
                parse(events[i], byPartition);
            } catch (HttpError e) {
                throw new HttpError(e.status(), (listed == null ? "" : "events[" + i + "]: ") + e.getMessage());
            }
        }
        List<Future<StandardEventsApplied>> results = new ArrayList<>();
        byPartition.forEach((partition, batch) -> results.add(partition.applyStandard(batch)));
        Future.all(results).onComplete(ar -> {
            if (ar.failed()) {
                Responses.error(
                        ctx, new HttpError(500, "indexer failure: " + ar.cause().getMessage()));
                return;
            }
            int applied = 0;
            int stale = 0;
            long gaps = 0;
            for (Future<StandardEventsApplied> f : results) {
                applied += f.result().applied();
                stale += f.result().stale();
                gaps += f.result().gaps();
            }
            Responses.answer(ctx, 200, new Applied("ok", applied, stale, gaps));
        });
    }

    private void parse(JsonObject body, Map<PartitionRef, List<StandardEvent>> out) {
        StandardEventRequests.Event e = JsonBinding.bind(body, StandardEventRequests.Event.class);
        String type = e.eventType();
        String model = e.modelName();
        String routingGroup = e.tenantId();
        PartitionKey key = new PartitionKey(model, routingGroup == null ? PartitionKey.DEFAULT : routingGroup);
        PartitionRef partition = registry.partition(key)
                .orElseThrow(() -> new HttpError(
                        404, "no indexer for model=" + key.modelName() + " tenant_id=" + key.routingGroup()));
        String backend =
                JsonBinding.bind(body, StandardEventRequests.Source.class).backendId();
        if (backend == null) {
            throw new HttpError(422, "missing field `backend_id`");
        }
        long workerId = InstanceIds.of(backend);
        if (!key.equals(registry.partitionOf(workerId))) {
            throw new HttpError(
                    404,
                    "backend_id `" + backend + "` is not a registered instance of model=" + key.modelName()
                            + " tenant_id=" + key.routingGroup());
        }
        StandardEventRequests.Placement place = JsonBinding.bind(body, StandardEventRequests.Placement.class);
        int dpRank = place.dpRank();
        if (dpRank < 0 || dpRank > EventBatch.MAX_RANK) {
            throw new HttpError(
                    422, "`dp_rank`: " + Integer.toUnsignedString(dpRank) + " is over " + EventBatch.MAX_RANK);
        }
        int blockSize = place.blockSize() == null ? partition.blockSize() : place.blockSize();
        if (blockSize != partition.blockSize()) {
            throw new HttpError(
                    422, "block_size " + blockSize + " differs from the partition's " + partition.blockSize());
        }
        String medium = place.medium();
        StorageTier tier = StorageTier.fromMedium(medium);
        String lora = place.loraName();
        String salt = place.additionalSalt();
        KvEvent event = switch (type) {
            case "stored" -> stored(body, tier, blockSize, lora);
            case "removed" ->
                new KvEvent.Removed(
                        tier,
                        JsonBinding.bind(body, StandardEventRequests.Blocks.class)
                                .seqHashes());
            case "cleared" -> KvEvent.Cleared.INSTANCE;
            default ->
                throw new HttpError(
                        422, "`event_type`: unknown value `" + type + "`, expected stored, removed or cleared");
        };
        String stream = String.join(
                "\u0000",
                model,
                Integer.toString(blockSize),
                String.valueOf(salt),
                String.valueOf(lora),
                key.routingGroup(),
                backend,
                String.valueOf(medium),
                Integer.toString(dpRank));
        out.computeIfAbsent(partition, p -> new ArrayList<>())
                .add(new StandardEvent(stream, e.eventId(), workerId, dpRank, event));
    }

    private static KvEvent stored(JsonObject body, StorageTier tier, int blockSize, String lora) {
        long[] blocks =
                JsonBinding.bind(body, StandardEventRequests.Blocks.class).seqHashes();
        if (blocks.length == 0) {
            throw new HttpError(422, "`seq_hashes`: a stored event names at least one block");
        }
        StandardEventRequests.Anchor anchor = JsonBinding.bind(body, StandardEventRequests.Anchor.class);
        boolean hasParent = anchor.parentHash() != null;
        Integer base = anchor.baseBlockIdx();
        if (!hasParent && base == null) {
            throw new HttpError(422, "a stored event needs `parent_hash` or `base_block_idx`");
        }
        if (!hasParent && base != 0) {
            throw new HttpError(422, "`parent_hash` is required below the root (base_block_idx " + base + ")");
        }
        long parent = hasParent
                ? JsonBinding.bind(body, StandardEventRequests.Parent.class).parentHash()
                : 0L;
        int[] tokens =
                JsonBinding.bind(body, StandardEventRequests.Tokens.class).tokenIds();
        tokens = tokens == null ? new int[0] : tokens;
        if (tokens.length == 0) {
            // Without tokens the local hashes are unknowable: the sequence hashes place the blocks
            // (docs/protocol/events.md#standardized-events-into-index-operations).
            return new KvEvent.StoredBySequence(tier, hasParent, parent, blocks);
        }
        // In longs: a block size near 2^31 times a few blocks overflows an int.
        long needed = (long) blocks.length * blockSize;
        if (tokens.length < needed) {
            throw new HttpError(
                    422,
                    "`token_ids` holds " + tokens.length + " tokens, " + blocks.length + " blocks of " + blockSize
                            + " need " + needed);
        }
        long seed = BlockHasher.seedFor(lora == null || lora.isEmpty() ? null : lora, null);
        long[] locals = BlockHasher.localHashes(tokens, (int) needed, blockSize, seed);
        return new KvEvent.Stored(tier, hasParent, parent, blocks, locals);
    }
}
