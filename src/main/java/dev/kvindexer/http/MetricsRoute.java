package dev.kvindexer.http;

import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.ListenerState;
import dev.kvindexer.metrics.IndexerMetrics;
import dev.kvindexer.metrics.PrometheusText;
import dev.kvindexer.partition.PartitionBus;
import dev.kvindexer.partition.PartitionMessages;
import dev.kvindexer.registry.PartitionEntry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code GET /metrics}: gathers the node's figures (each partition's from its actor) and renders the page. */
final class MetricsRoute {
    private final Vertx vertx;
    private final NodeServices node;

    MetricsRoute(Vertx vertx, NodeServices node) {
        this.vertx = vertx;
        this.node = node;
    }

    void get(RoutingContext ctx) {
        List<PartitionEntry> partitions = node.registry().partitions();
        List<Future<IndexerMetrics.PartitionFigures>> figures = new ArrayList<>();
        for (PartitionEntry p : partitions) {
            figures.add(PartitionBus.<PartitionMessages.StatsReply>request(vertx.eventBus(), p.address(),
                    PartitionMessages.Stats.INSTANCE).map(m -> new IndexerMetrics.PartitionFigures(p.key().modelName(),
                    p.key().tenantId(), m.body().heldPerTier(), m.body().deviceBlocks())));
        }
        // A partition that is going away as we ask is left out rather than failing the scrape.
        Future.join(figures).onComplete(ar -> {
            List<IndexerMetrics.PartitionFigures> found = new ArrayList<>();
            for (Future<IndexerMetrics.PartitionFigures> f : figures) {
                if (f.succeeded()) {
                    found.add(f.result());
                }
            }
            IndexerMetrics.Snapshot snapshot = new IndexerMetrics.Snapshot(partitions.size(),
                    node.registry().instanceCount(), listenersByState(), found,
                    node.membership() == null ? 1 : node.membership().memberCount(),
                    node.meters().recoverySeconds(), node.meters().recoveredEvents(),
                    node.accessLog() == null ? 0 : node.accessLog().dropped(),
                    node.accessLog() == null ? 0 : node.accessLog().writeErrors(),
                    node.ingest().restarts(), node.ingest().degradedReason() != null);
            ctx.response().setStatusCode(200).putHeader("content-type", PrometheusText.CONTENT_TYPE)
                    .end(IndexerMetrics.render(snapshot, node.meters().http(), node.counters(),
                            node.meters().cluster(), node.meters().micrometerScrape()));
        });
    }

    private Map<String, Integer> listenersByState() {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (ListenerState s : ListenerState.values()) {
            out.put(s.jsonName(), 0);
        }
        for (Listener l : node.registry().listeners()) {
            out.merge(l.state().jsonName(), 1, Integer::sum);
        }
        return out;
    }
}
