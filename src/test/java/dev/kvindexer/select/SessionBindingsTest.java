package dev.kvindexer.select;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The session binding table on a clock the test moves: leases, the idle TTL that starts when the last one goes,
 * exact bindings, full tables, and the versions replicas settle on (Dynamo's {@code affinity.rs} rules).
 */
class SessionBindingsTest {
    private static final long TTL = 10_000;
    private static final PartitionKey P = new PartitionKey("model", "default");
    private static final PartitionKey OTHER = new PartitionKey("other", "default");

    private final AtomicLong now = new AtomicLong(1_000);
    private final Set<Long> gone = new HashSet<>();
    private final Set<Long> forgotten = new HashSet<>();
    private final List<SessionBindings.Binding> published = new ArrayList<>();

    private SessionBindings table(int maxEntries) {
        SessionBindings t = new SessionBindings(
                TTL,
                maxEntries,
                now::get,
                100,
                (p, target) -> !gone.contains(target.workerId()),
                (p, target) -> !forgotten.contains(target.workerId()));
        t.replicate(7, published::add);
        return t;
    }

    /** A booking of {@code session} under reservation {@code id}, landing on worker {@code worker} rank 0. */
    private static void book(SessionBindings t, String session, String id, long worker) {
        SessionBindings.Hold h = t.hold(P, session);
        t.check(h, worker, 0);
        t.commit(h, worker, 0, id);
    }

    @Test
    void aBookingBindsItsSessionAndTheIdleTtlStartsWhenItsLastLeaseEnds() {
        SessionBindings t = table(16);
        book(t, "s", "r1", 1);
        assertEquals(new AffinityTarget(1, 0), t.bound(P, "s"));
        book(t, "s", "r2", 1);

        now.addAndGet(5 * TTL);
        assertEquals(new AffinityTarget(1, 0), t.bound(P, "s"), "leased bindings never idle out");
        t.released("r1");
        now.addAndGet(5 * TTL);
        assertEquals(new AffinityTarget(1, 0), t.bound(P, "s"), "one lease still holds it");

        t.released("r2");
        now.addAndGet(TTL - 1);
        assertEquals(new AffinityTarget(1, 0), t.bound(P, "s"));
        now.addAndGet(1);
        assertNull(t.bound(P, "s"), "idle for the TTL after the last lease ended");
        assertEquals(1, t.size(), "until it is swept");
        assertEquals(1, t.expireIdle());
        assertEquals(0, t.size());
        assertInstanceOf(SessionBindings.Fresh.class, t.hold(P, "s"), "and bound anew by the next booking");
    }

    @Test
    void aQueryFollowsALiveBindingAndBindsNothing() {
        SessionBindings t = table(16);
        assertNull(t.bound(P, "s"));
        assertEquals(0, t.size(), "looking a session up makes no binding");
        book(t, "s", "r1", 3);
        assertEquals(new AffinityTarget(3, 0), t.bound(P, "s"));
        assertNull(t.bound(OTHER, "s"), "one table per partition");
    }

    @Test
    void aBoundSessionIsExactAndABookingElsewhereDropsItsBinding() {
        SessionBindings t = table(16);
        book(t, "s", "r1", 1);
        Refusal rank = assertThrows(Refusal.class, () -> t.check(t.hold(P, "s"), 1, 1));
        assertEquals("session s is bound to DP rank 0, not 1", rank.getMessage());
        assertEquals(Refusal.Kind.BAD_REQUEST, rank.kind());
        assertNull(t.bound(P, "s"), "Dynamo's hard mode invalidates the binding it refuses");

        book(t, "s", "r2", 1);
        Refusal worker = assertThrows(Refusal.class, () -> t.check(t.hold(P, "s"), 2, 0));
        assertEquals("session s is bound to worker 1, not 2", worker.getMessage());
        assertInstanceOf(SessionBindings.Fresh.class, t.hold(P, "s"));
        t.released("r1");
        t.released("r2");
        assertNull(t.bound(P, "s"), "leases of a dropped binding release nothing");
    }

    @Test
    void aBindingWhoseWorkerIsGoneIsDroppedAndTheSessionBoundAnew() {
        SessionBindings t = table(16);
        book(t, "s", "r1", 1);
        gone.add(1L);
        assertInstanceOf(SessionBindings.Fresh.class, t.hold(P, "s"));
        book(t, "s", "r2", 2);
        assertEquals(new AffinityTarget(2, 0), t.bound(P, "s"));
        int before = published.size();
        t.released("r1");
        assertEquals(before, published.size(), "the old binding's lease leaves the new binding alone");
        assertEquals(new AffinityTarget(2, 0), t.bound(P, "s"));
    }

    @Test
    void aFullTableRoutesNewSessionsUnpinnedUntilABindingIdlesOut() {
        SessionBindings t = table(2);
        book(t, "a", "r1", 1);
        book(t, "b", "r2", 1);
        SessionBindings.Hold h = t.hold(P, "c");
        assertInstanceOf(SessionBindings.Unpinned.class, h);
        t.commit(h, 1, 0, "r3");
        assertNull(t.bound(P, "c"), "an unpinned booking binds nothing");
        assertInstanceOf(SessionBindings.Bound.class, t.hold(P, "a"), "bound sessions still hold");
        assertInstanceOf(SessionBindings.Fresh.class, t.hold(OTHER, "c"), "another partition has its own table");

        t.released("r1");
        now.addAndGet(TTL);
        assertInstanceOf(SessionBindings.Fresh.class, t.hold(P, "c"), "an idle binding makes room");
        assertEquals(SessionBindings.Applied.INSERTED, t.apply(binding("d", 1, 500, 9)));
        assertEquals(SessionBindings.Applied.REJECTED_CAPACITY, t.apply(binding("e", 1, 500, 9)));
    }

    @Test
    void sessionIdsOverTheByteLimitAreRefused() {
        SessionBindings t = table(16);
        String max = "é".repeat(128);
        book(t, max, "r1", 1);
        String over = "é".repeat(128) + "x";
        Refusal r = assertThrows(Refusal.class, () -> t.hold(P, over));
        assertEquals("session affinity ID must not exceed 256 bytes", r.getMessage());
        assertThrows(Refusal.class, () -> t.bound(P, over));
        assertEquals(SessionBindings.Applied.REJECTED_SESSION_ID, t.apply(binding(over, 1, 500, 9)));
        assertEquals(1, t.size());
    }

    @Test
    void replicasSettleOnTheHigherVersion() {
        SessionBindings t = table(16);
        assertEquals(SessionBindings.Applied.INSERTED, t.apply(binding("s", 1, 500, 9)));
        assertEquals(new AffinityTarget(1, 0), t.bound(P, "s"));
        assertEquals(SessionBindings.Applied.REFRESHED, t.apply(binding("s", 1, 500, 9)), "idempotent");
        assertEquals(SessionBindings.Applied.IGNORED_CONFLICT, t.apply(binding("s", 2, 499, 9)));
        assertEquals(SessionBindings.Applied.IGNORED_CONFLICT, t.apply(binding("s", 2, 500, 8)));
        assertEquals(SessionBindings.Applied.REPLACED_NEWER, t.apply(binding("s", 2, 500, 10)), "writer breaks ties");
        assertEquals(new AffinityTarget(2, 0), t.bound(P, "s"));
        assertEquals(
                SessionBindings.Applied.REPLACED_NEWER, t.apply(binding("s", 3, -2, 1)), "sequences compare unsigned");

        forgotten.add(4L);
        assertEquals(SessionBindings.Applied.IGNORED_UNKNOWN_WORKER, t.apply(binding("s", 4, -1, 1)));
        assertEquals(new AffinityTarget(3, 0), t.bound(P, "s"));

        now.addAndGet(TTL);
        assertEquals(SessionBindings.Applied.REPLACED_EXPIRED, t.apply(binding("s", 1, 1, 1)));
        assertEquals(new AffinityTarget(1, 0), t.bound(P, "s"), "an idle binding takes whatever comes");

        gone.add(5L);
        assertEquals(
                SessionBindings.Applied.REPLACED_NEWER,
                t.apply(binding("s", 5, 2, 1)),
                "a worker in the catalog but not schedulable is kept, as Dynamo's replicas do");
        assertEquals(new AffinityTarget(5, 0), t.bound(P, "s"));
        assertInstanceOf(SessionBindings.Fresh.class, t.hold(P, "s"), "until a booking drops it");
        assertTrue(published.isEmpty(), "what replicas send is never sent back");
    }

    @Test
    void aCatchUpWithAVersionAlreadyHeldChangesNothing() {
        SessionBindings t = table(16);
        assertEquals(SessionBindings.Applied.INSERTED, t.catchUp(binding("s", 1, 500, 9)));
        now.addAndGet(TTL - 1);
        assertEquals(SessionBindings.Applied.UNCHANGED, t.catchUp(binding("s", 1, 500, 9)));
        assertEquals(SessionBindings.Applied.UNCHANGED, t.catchUp(binding("s", 2, 499, 9)));
        now.addAndGet(1);
        assertNull(t.bound(P, "s"), "re-reading the record kept no idle binding alive");
        assertEquals(SessionBindings.Applied.REPLACED_EXPIRED, t.catchUp(binding("s", 1, 500, 9)));
        assertEquals(SessionBindings.Applied.REPLACED_NEWER, t.catchUp(binding("s", 2, 501, 9)));
    }

    @Test
    void aLocalBindingOutranksEverySequenceItHasSeen() {
        SessionBindings t = table(16);
        t.apply(binding("x", 1, 5_000, 9));
        book(t, "s", "r1", 1);
        SessionBindings.Binding mine = published.get(0);
        assertEquals(new SessionBindings.Version(5_001, 7), mine.version());
        assertEquals(new AffinityTarget(1, 0), mine.target());
        t.released("r1");
        assertEquals(mine.version(), published.get(1).version(), "a release refreshes the same version");
    }

    @Test
    void aReplicaReplacingALeasedBindingKeepsTheLeaseCounted() {
        SessionBindings t = table(16);
        book(t, "s", "r1", 1);
        t.apply(binding("s", 2, Long.MAX_VALUE, 1));
        assertEquals(new AffinityTarget(2, 0), t.bound(P, "s"));
        now.addAndGet(5 * TTL);
        assertEquals(new AffinityTarget(2, 0), t.bound(P, "s"), "still leased by r1");
        t.released("r1");
        assertNull(t.bound(P, "s"), "the replaced binding kept its own idle deadline");
    }

    @Test
    void theTtlRangeIsDynamos() {
        assertEquals(1000, SessionBindings.ttlMillis(1));
        assertEquals(31_536_000_000L, SessionBindings.ttlMillis(31_536_000));
        assertThrows(IllegalArgumentException.class, () -> SessionBindings.ttlMillis(0));
        assertThrows(IllegalArgumentException.class, () -> SessionBindings.ttlMillis(31_536_001));
    }

    private static SessionBindings.Binding binding(String session, long worker, long sequence, long writer) {
        return new SessionBindings.Binding(
                P, session, new AffinityTarget(worker, 0), new SessionBindings.Version(sequence, writer));
    }
}
