package dev.kvindexer.selectservice;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.select.Booking;
import dev.kvindexer.select.Bookings;
import dev.kvindexer.select.ConfigOverride;
import dev.kvindexer.select.PartitionInfo;
import dev.kvindexer.select.Prompt;
import dev.kvindexer.select.Roster;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.select.SelectionState;
import dev.kvindexer.selectservice.replication.SharedReservations;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonBinding;
import dev.kvindexer.web.JsonRequest;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The reservation routes (docs/api/selection.md#post-reservations, docs/api/selection.md#reservation-lifecycle): a booking by replay or by naming the rank, and its lifecycle to its
 * release. Each change is applied here and carried to the other replicas before the client hears of it; a step that
 * may lower load lets waiting selections go.
 */
final class ReservationRoutes {
    private final SelectionConfig config;
    private final Roster roster;
    private final Bookings bookings;
    private final SelectionQueue queue;
    private final SharedReservations shared;
    private final BookedPrompts prompts;
    private final Supplier<Future<Void>> bindingsShared;
    private final RandomGenerator random;

    ReservationRoutes(
            SelectionState state,
            SelectionQueue queue,
            SharedReservations shared,
            BookedPrompts prompts,
            Supplier<Future<Void>> bindingsShared,
            RandomGenerator random) {
        this.config = state.config();
        this.roster = state.roster();
        this.bookings = state.bookings();
        this.queue = queue;
        this.shared = shared;
        this.prompts = prompts;
        this.bindingsShared = bindingsShared;
        this.random = random;
    }

    /** {@code POST /reservations}: without a worker, the replay of a pending selection. */
    void reserve(RoutingContext ctx) {
        JsonObject body = JsonRequest.of(ctx).body();
        SelectRequests.Reserve r = JsonBinding.bind(body, SelectRequests.Reserve.class);
        String id = r.selectionId();
        PartitionKey p = r.partition();
        if (r.workerId() == null) {
            Booking replayed = bookings.reserveReplay(p, id);
            Replies.send(
                    ctx,
                    201,
                    shared.booked(id).compose(v -> bindingsShared.get()).map(v -> booked(replayed)));
            return;
        }
        SelectRequests.ExplicitBooking named = JsonBinding.bind(body, SelectRequests.ExplicitBooking.class);
        ConfigOverride override = SelectRequests.RouterConfig.of(named.routerConfigOverride());
        PartitionInfo info = roster.requireReady(p);
        Prompt prompt = SelectJson.promptOf(body, info, override, config, false, random);
        Booking b = bookings.reserveExplicit(
                p,
                id,
                r.workerId(),
                named.dpRank(),
                prompt,
                named.effectivePrefillTokens(),
                named.trackPrefillTokens(),
                override,
                named.expectedOutputTokens(),
                JsonBinding.bind(body, SelectRequests.Lora.class).loraName());
        Replies.send(ctx, 201, shared.booked(id).map(v -> booked(b)));
    }

    private SelectAnswers.Booked booked(Booking b) {
        prompts.booked(b.partition(), b.worker().workerId(), b.dpRank(), b.prompt());
        return SelectAnswers.booking(b);
    }

    void prefillComplete(RoutingContext ctx) {
        Replies.ok(ctx, shared.prefillComplete(ctx.pathParam("selection_id")));
        queue.wake();
    }

    void outputBlock(RoutingContext ctx) {
        Double fraction =
                JsonBinding.bind(ctx, SelectRequests.OutputBlock.class).decayFraction();
        double decay = fraction != null ? fraction : Double.NaN;
        if (!Double.isNaN(decay) && !(decay >= 0.0 && decay <= 1.0)) {
            throw new HttpError(400, "decay_fraction must be between 0.0 and 1.0");
        }
        Replies.ok(ctx, shared.outputBlock(ctx.pathParam("selection_id"), decay));
        queue.wake();
    }

    void free(RoutingContext ctx) {
        Replies.ok(ctx, shared.free(ctx.pathParam("selection_id")));
        queue.wake();
    }
}
