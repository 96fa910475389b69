package dev.kvindexer.selectservice;

import dev.kvindexer.select.Booking;
import dev.kvindexer.select.Choice;
import dev.kvindexer.select.LoadSignals;
import dev.kvindexer.select.LoadViews;
import dev.kvindexer.select.WorkerEntry;
import dev.kvindexer.web.JsonNumbers;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The selection service's answers written in the reference's shapes (docs/api/selection.md). */
final class SelectAnswers {
    private SelectAnswers() {}

    static JsonObject record(WorkerEntry w) {
        JsonObject o = new JsonObject()
                .put("worker_id", JsonNumbers.u64(w.workerId()))
                .put("model_name", w.modelName())
                .put("routing_group", w.routingGroup())
                .put("lifecycle", w.lifecycle().wire())
                .put("endpoint", w.endpoint())
                .put("kv_events_endpoint", w.kvEventsEndpoint());
        if (!w.kvEventsEndpoints().isEmpty()) {
            o.put("kv_events_endpoints", new JsonObject(new LinkedHashMap<>(w.kvEventsEndpoints())));
        }
        o.put("replay_endpoint", w.replayEndpoint())
                .put("block_size", w.blockSize())
                .put("data_parallel_start_rank", w.dpStart())
                .put("data_parallel_size", w.dpSize())
                .put("max_num_batched_tokens", w.maxNumBatchedTokens())
                .put("total_kv_blocks", w.totalKvBlocks())
                .put("stable_routing_id", w.extras().get("stable_routing_id"))
                .put("is_eagle", w.isEagle())
                .put("taints", new JsonArray(new ArrayList<>(w.taints())))
                .put("topology_domains", w.extras().getOrDefault("topology_domains", Map.of()))
                .put("kv_transfer_domain", w.extras().get("kv_transfer_domain"))
                .put("kv_transfer_enforcement", w.extras().get("kv_transfer_enforcement"))
                .put("kv_transfer_preferred_weight", w.extras().get("kv_transfer_preferred_weight"));
        for (String name :
                List.of("router_hint_worker_type", "router_hint_source_control_endpoints", "kv_event_source_mode")) {
            if (w.extras().get(name) != null) {
                o.put(name, w.extras().get(name));
            }
        }
        if (!w.reasons().isEmpty()) {
            o.put("not_schedulable_reasons", new JsonArray(new ArrayList<>(w.reasons())));
        }
        return o;
    }

    static JsonObject choice(Choice c, boolean booking, LoadSignals signals) {
        JsonObject o = new JsonObject();
        if (c.selectionId() != null) {
            o.put("selection_id", c.selectionId());
        }
        Choice.Overlap ov = c.overlap();
        JsonObject dp = new JsonObject();
        for (int i = 0; i < ov.dpRanks().length; i++) {
            dp.put(Long.toString(ov.dpRanks()[i]), ov.dpTokens()[i]);
        }
        o.put("model_name", c.partition().modelName())
                .put("routing_group", c.partition().routingGroup())
                .put("worker_id", JsonNumbers.u64(c.worker().workerId()))
                .put("dp_rank", c.dpRank())
                .put("endpoint", c.worker().endpoint())
                .put("block_size", c.blockSize())
                .put(
                        "overlap",
                        new JsonObject()
                                .put("longest_matched", ov.longestMatched())
                                .put("gpu", ov.gpu())
                                .put("dp", dp)
                                .put("cpu", ov.cpu())
                                .put("disk", ov.disk()))
                .put("effective_prefill_tokens", c.effectivePrefill())
                .put("potential_decode_blocks", c.potentialDecodeBlocks());
        putIfKnown(o, "decode_busy", signals.decodeBusy());
        LoadSignals.WorkerLoad load = signals.workerLoad();
        if (load != null) {
            JsonObject l = new JsonObject()
                    .put("active_prefill_tokens", load.activePrefillTokens())
                    .put("prefill_token_capacity", JsonNumbers.u64(load.prefillTokenCapacity()));
            putIfKnown(
                    l, "total_kv_blocks", load.totalKvBlocks() == null ? null : JsonNumbers.u64(load.totalKvBlocks()));
            putIfKnown(l, "prefill_busy", load.prefillBusy());
            o.put("worker_load", l);
        }
        if (booking) {
            JsonArray seq = new JsonArray();
            for (long h : c.prompt().sequenceHashes()) {
                seq.add(h);
            }
            o.put("sequence_hashes", seq)
                    .put("isl_tokens", c.prompt().isl())
                    .put("track_prefill_tokens", c.trackPrefill());
        }
        return o;
    }

    /**
     * A booking's {@code kv_hint} (docs/api/selection.md#kv-hints): one {@code kv.fetch} action naming where the
     * chosen rank can fetch the source's blocks and their engine hashes from the prompt's first block.
     */
    static JsonObject kvHint(String selectionId, String controlEndpoint, long[] engineHashes) {
        JsonArray hashes = new JsonArray();
        for (long h : engineHashes) {
            hashes.add(JsonNumbers.u64(h));
        }
        return new JsonObject()
                .put("protocol_version", "0.1")
                .put("message_id", selectionId)
                .put(
                        "actions",
                        new JsonArray()
                                .add(new JsonObject()
                                        .put("action_id", "a1")
                                        .put("action_type", "kv.fetch")
                                        .put("action_version", "1.0")
                                        .put(
                                                "payload",
                                                new JsonObject()
                                                        .put("block_hashes", hashes)
                                                        .put("source_control_endpoint", controlEndpoint))));
    }

    /** The reference leaves an unknown signal out of its answers rather than writing {@code null}. */
    private static void putIfKnown(JsonObject o, String name, Object value) {
        if (value != null) {
            o.put(name, value);
        }
    }

    static JsonObject booking(Booking b) {
        return new JsonObject()
                .put("selection_id", b.selectionId())
                .put("model_name", b.partition().modelName())
                .put("routing_group", b.partition().routingGroup())
                .put("worker_id", JsonNumbers.u64(b.worker().workerId()))
                .put("dp_rank", b.dpRank())
                .put("endpoint", b.worker().endpoint());
    }

    static JsonObject loadRow(LoadViews.LoadRow r) {
        return new JsonObject()
                .put("worker_id", JsonNumbers.u64(r.workerId()))
                .put("dp_rank", r.dpRank())
                .put("potential_prefill_tokens", r.prefillTokens())
                .put("potential_decode_blocks", r.decodeBlocks())
                .put("active_requests", r.requests());
    }

    /** {@code predicted}: whether predicted entries are on, and each row shows its own {@code predicted_blocks}. */
    static JsonObject scores(int blockSize, int blocks, List<LoadViews.ScoreRow> rows, boolean predicted) {
        JsonArray workers = new JsonArray();
        for (LoadViews.ScoreRow r : rows) {
            JsonObject row = new JsonObject()
                    .put("worker_id", JsonNumbers.u64(r.workerId()))
                    .put("dp_rank", r.dpRank())
                    .put("device_blocks", r.dev())
                    .put("host_pinned_blocks", r.dev() + r.host())
                    .put("disk_blocks", r.dev() + r.host() + r.disk())
                    .put("host_pinned_extension_blocks", r.host())
                    .put("disk_extension_blocks", r.disk())
                    .putNull("shared_beyond_device_blocks")
                    .put("router_credit_blocks", r.creditBlocks());
            workers.add(predicted ? row.put("predicted_blocks", r.predicted()) : row);
        }
        return new JsonObject()
                .put("block_size", blockSize)
                .put("num_blocks", blocks)
                .put("workers", workers)
                .put(
                        "shared_cache",
                        new JsonObject()
                                .put("enabled", false)
                                .put("total_hit_blocks", 0)
                                .put("ranges", new JsonArray())
                                .putNull("error"));
    }
}
