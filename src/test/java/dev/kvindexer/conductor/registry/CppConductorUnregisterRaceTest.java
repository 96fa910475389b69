package dev.kvindexer.conductor.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.conductor.CppConductorRegistration;
import dev.kvindexer.conductor.CppConductorState;
import dev.kvindexer.hash.HashProfile;
import dev.kvindexer.ingest.StalledPoller;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.Future;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The C++ Conductor's answers while an unregistration is stopping its subscriber (held here by a stalled poller): a
 * second unregistration is told "service is already being unregistered", and a registration of the key "service is
 * being unregistered", rather than taken as unchanged and then undone by the unregistration under way.
 */
class CppConductorUnregisterRaceTest {
    private static final HashProfile PROFILE = new HashProfile(HashProfile.Algorithm.SHA256_CBOR, "0");

    @RegisterExtension
    final LocalNode indexer = new LocalNode();

    @Test
    void aKeyBeingUnregisteredIsRefusedUntilItIsGone() throws Exception {
        TestPublisher pub = indexer.engine();
        CppConductorSubscriptions subscriptions = indexer.node().conductor();
        CppConductorRegistration r = new CppConductorRegistration(
                pub.endpoint(), "vLLM", "m", "engine-a", 16, 0, PROFILE, "", "", "default", null);
        String key = r.serviceKey();
        assertInstanceOf(CppConductorState.Added.class, await(subscriptions.register(r)));
        pub.awaitSubscriber();

        Future<CppConductorRegistration> first;
        try (StalledPoller stalled = StalledPoller.of(indexer.node().ingest(), subscriptions.listenerOf(key))) {
            first = subscriptions.unregister(key);
            assertTrue(!first.isComplete(), "the subscriber cannot stop while its poller is held");
            ExecutionException again = org.junit.jupiter.api.Assertions.assertThrows(
                    ExecutionException.class, () -> await(subscriptions.unregister(key)));
            assertEquals(
                    "service is already being unregistered: " + key,
                    again.getCause().getMessage());
            CppConductorState.Registered meanwhile = await(subscriptions.register(r));
            assertEquals(new CppConductorState.Refused("service is being unregistered: " + key), meanwhile);
        }
        assertEquals(key, await(first).serviceKey());
        assertTrue(await(subscriptions.conductor().services()).isEmpty(), "the unregistration went through");
        assertInstanceOf(
                CppConductorState.Added.class, await(subscriptions.register(r)), "once it is gone, the key is free");
    }

    private static <T> T await(Future<T> f) throws Exception {
        return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
}
