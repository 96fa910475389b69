package dev.kvindexer.conductor.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.conductor.CppConductor;
import dev.kvindexer.conductor.CppConductorRegistration;
import dev.kvindexer.conductor.CppConductorState;
import dev.kvindexer.hash.HashProfile;
import dev.kvindexer.support.LocalNode;
import io.vertx.core.Future;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Requests for one service key that arrive together take turns: an unregistration queued behind a registration ends
 * the subscription that registration started, and a registration repeated while the first one's subscription starts
 * gets the answer of what is then registered.
 */
class CppConductorRequestTurnsTest {
    private static final HashProfile PROFILE = new HashProfile(HashProfile.Algorithm.SHA256_CBOR, "0");

    @RegisterExtension
    final LocalNode indexer = new LocalNode(c -> c.withMaxListeners(2));

    private static CppConductorRegistration engine(String instance, String endpoint) {
        return new CppConductorRegistration(endpoint, "vLLM", "m", instance, 16, 0, PROFILE, "", "", "default", null);
    }

    @Test
    void anUnregistrationQueuedBehindARegistrationEndsItsSubscription() throws Exception {
        CppConductorSubscriptions subs = indexer.node().conductor();
        CppConductorRegistration r = engine("engine-a", indexer.engine().endpoint());
        CountDownLatch hold = holdTheConductor(subs.conductor());
        Future<CppConductorState.Registered> registered = subs.register(r);
        Future<CppConductorRegistration> unregistered = subs.unregister(r.serviceKey());
        hold.countDown();
        assertInstanceOf(CppConductorState.Added.class, await(registered));
        assertEquals(r.serviceKey(), await(unregistered).serviceKey());
        assertTrue(await(subs.conductor().services()).isEmpty());
        assertNull(subs.listenerOf(r.serviceKey()), "no subscription is left for the key");
        assertEquals(0, indexer.node().ingest().listenerCount());

        // Registered again elsewhere, the key has one subscription: the new endpoint's.
        String fresh = indexer.engine().endpoint();
        assertInstanceOf(CppConductorState.Added.class, await(subs.register(engine("engine-a", fresh))));
        assertEquals(1, indexer.node().ingest().listenerCount());
        assertEquals(fresh, subs.listenerOf(r.serviceKey()).endpoint());
    }

    @Test
    void aRegistrationRepeatedWhileTheFirstCannotSubscribeIsNotAnsweredAsRegistered() throws Exception {
        CppConductorSubscriptions subs = indexer.node().conductor();
        for (String filler : List.of("filler-1", "filler-2")) {
            assertInstanceOf(
                    CppConductorState.Added.class,
                    await(subs.register(engine(filler, indexer.engine().endpoint()))));
        }
        CppConductorRegistration r = engine("engine-a", indexer.engine().endpoint());
        CountDownLatch hold = holdTheConductor(subs.conductor());
        Future<CppConductorState.Registered> first = subs.register(r);
        Future<CppConductorState.Registered> second = subs.register(r);
        hold.countDown();
        for (Future<CppConductorState.Registered> f : List.of(first, second)) {
            f.toCompletionStage().toCompletableFuture().handle((v, t) -> null).get(30, TimeUnit.SECONDS);
        }
        assertTrue(first.failed(), "the listener limit refuses the first");
        assertTrue(second.failed(), "the second must not be told it is registered: " + second.result());
        assertTrue(await(subs.conductor().services()).stream()
                .noneMatch(s -> s.serviceKey().equals(r.serviceKey())));
    }

    /** Holds the conductor's context, so that requests sent meanwhile queue there in the order sent. */
    private static CountDownLatch holdTheConductor(CppConductor conductor) {
        CountDownLatch hold = new CountDownLatch(1);
        conductor.apply("nobody", List.of(), () -> {
            try {
                hold.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return hold;
    }

    private static <T> T await(Future<T> f) throws Exception {
        return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
}
