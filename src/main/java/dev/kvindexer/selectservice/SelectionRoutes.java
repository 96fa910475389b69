package dev.kvindexer.selectservice;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.select.Bookings;
import dev.kvindexer.select.Choice;
import dev.kvindexer.select.HintSources;
import dev.kvindexer.select.LoadSignals;
import dev.kvindexer.select.LoadViews;
import dev.kvindexer.select.NotApplied;
import dev.kvindexer.select.RankOverlaps;
import dev.kvindexer.select.Roster;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.select.SelectionState;
import dev.kvindexer.selectservice.replication.SharedReservations;
import dev.kvindexer.web.JsonRequest;
import dev.kvindexer.web.Responses;
import io.vertx.core.Future;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The selection routes (docs/api/selection.md#post-select, docs/api/selection.md#inspection): {@code /select} and {@code /select_and_reserve}, and the load and score
 * views. A request is read, waits its turn if its partition is overloaded (unless it is advisory), has its overlaps
 * from the index, and is then chosen (and booked) in one step on the service's context.
 */
final class SelectionRoutes {
    private final SelectionConfig config;
    private final Roster roster;
    private final Bookings bookings;
    private final LoadViews views;
    private final SelectionQueue queue;
    private final IndexOverlaps overlaps;
    private final SharedReservations shared;
    private final BookedPrompts prompts;
    private final Supplier<Future<Void>> bindingsShared;
    private final RandomGenerator random;
    private final Spans spans;
    private final boolean sessions;

    SelectionRoutes(
            SelectionState state,
            SelectionQueue queue,
            IndexOverlaps overlaps,
            SharedReservations shared,
            BookedPrompts prompts,
            Supplier<Future<Void>> bindingsShared,
            RandomGenerator random,
            Spans spans) {
        this.spans = spans;
        this.config = state.config();
        this.roster = state.roster();
        this.bookings = state.bookings();
        this.views = state.views();
        this.queue = queue;
        this.overlaps = overlaps;
        this.shared = shared;
        this.prompts = prompts;
        this.bindingsShared = bindingsShared;
        this.random = random;
        this.sessions = state.sessions() != null;
    }

    void select(RoutingContext ctx, boolean reserve) {
        if (ctx.request().getHeader(NotApplied.POLICY_CLASS_HEADER) != null) {
            NotApplied.report(
                    "the " + NotApplied.POLICY_CLASS_HEADER + " header",
                    "policy classes are not implemented; every selection shares the one queue");
        }
        SelectJson.Selection s =
                SelectJson.selection(JsonRequest.of(ctx).body(), roster, config, random, reserve, sessions);
        // An advisory selection reads the load as it is now; waiting for it to drop would defeat its purpose.
        Future<Void> turn = s.advisory()
                ? Future.succeededFuture()
                : queue.turn(s.partition(), s.options(), s.prompt().isl());
        // A turn and the overlaps come back on the service's own context: the request's trace goes on from there.
        Spans.Parent request = spans.parent();
        Future<SelectAnswers.Chosen> chosen = turn.compose(
                        v -> request.within(() -> overlaps.of(s.partition(), s.prompt())))
                .compose(o ->
                        request.within(() -> reserve ? selectAndReserve(s, o) : Future.succeededFuture(select(s, o))))
                .map(answer -> answer.withIds(s.selectionId(), s.reservationId()));
        Replies.send(ctx, 200, chosen);
    }

    private SelectAnswers.Chosen select(SelectJson.Selection s, RankOverlaps o) {
        Choice c = bookings.select(s.partition(), s.prompt(), o, s.options());
        return SelectAnswers.choice(c, false, LoadSignals.of(c, config, s.advisory()));
    }

    private Future<SelectAnswers.Chosen> selectAndReserve(SelectJson.Selection s, RankOverlaps o) {
        Choice c = bookings.selectAndReserve(s.partition(), s.prompt(), o, s.options());
        // Decided from the same overlaps the choice saw. Only an index that engines alone write names blocks a source
        // holds: with KV events off it holds bookings, and predicted entries are bookings too (Dynamo also gives no
        // hint then).
        HintSources.Source source =
                config.useKvEvents() && !config.predicting() ? HintSources.best(roster, c, o) : null;
        // A booking's session binding reaches the other replicas before its client hears of it, as the booking does.
        return shared.booked(c.selectionId()).compose(v -> bindingsShared.get()).compose(v -> {
            prompts.booked(c.partition(), c.worker().workerId(), c.dpRank(), c.prompt());
            SelectAnswers.Chosen answer = SelectAnswers.choice(c, true, LoadSignals.of(c, config, false));
            if (source == null) {
                return Future.succeededFuture(answer);
            }
            // The booking stands whatever happens here: a hint the index can no longer back is left out.
            return overlaps.engineHashes(c.partition(), source.workerId(), source.dpRank(), c.prompt(), source.blocks())
                    .map(hashes -> hashes.length == 0
                            ? answer
                            : answer.withHint(SelectAnswers.kvHint(c.selectionId(), source.controlEndpoint(), hashes)));
        });
    }

    /** {@code /potential_loads}, or with {@code scores} {@code /overlap_scores}. */
    void inspect(RoutingContext ctx, boolean scores) {
        SelectJson.Inspection i = SelectJson.inspection(JsonRequest.of(ctx).body(), roster, config, random);
        Replies.send(ctx, 200, overlaps.of(i.partition(), i.prompt()).map(o -> {
            if (scores) {
                return SelectAnswers.scores(
                        i.info().blockSize(),
                        i.prompt().blockHashes().length,
                        views.overlapScores(i.partition(), i.prompt(), o, i.override()),
                        overlaps.predicting());
            }
            return SelectAnswers.loadRows(views.potentialLoads(i.partition(), i.prompt(), o, i.override()));
        }));
    }

    /** {@code GET /loads}: every partition's ranks with their load, and what waits in its queue. */
    void loads(RoutingContext ctx) {
        String model = ctx.queryParams().get("model_name");
        String routingGroup = ctx.queryParams().get("routing_group");
        List<SelectAnswers.PartitionLoads> out = new ArrayList<>();
        for (PartitionKey p : roster.partitions()) {
            if ((model != null && !model.equals(p.modelName()))
                    || (routingGroup != null && !routingGroup.equals(p.routingGroup()))) {
                continue;
            }
            out.add(SelectAnswers.partitionLoads(p, views.loads(p), queue.size(p), queue.islTokens(p)));
        }
        Responses.answer(ctx, 200, out);
    }
}
