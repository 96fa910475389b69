package dev.kvindexer.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.support.ListenerScale;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Ten thousand listeners on one node, every one active and applying a batch, each costing one connection (about one
 * descriptor) and no thread. A machine whose descriptor limit is lower runs as many as the node's ceiling there
 * leaves room for, so the build never fails for the machine's settings alone. The node's ceiling is filled in the
 * chaos profile ({@code ListenerScaleChaosTest}).
 */
class ListenerScaleTest {
    private static final int LISTENERS = 10_000;

    @Test
    void tenThousandListenersCostAboutADescriptorAndNoThreadEach() throws Exception {
        // One hundred listeners a publisher port, under the ceiling the descriptor limit gives the node.
        int listeners = Math.min(LISTENERS, (ListenerCapacity.derived() - 100) / 100 * 100);
        assertTrue(listeners >= 100, "the descriptor limit leaves no room for the test: " + ListenerCapacity.derived());
        ListenerScale.Figures f = ListenerScale.run(listeners, Duration.ofSeconds(120), false);
        System.out.println(f);
        // Every listener holds one connection to its publisher, counted among this process's descriptors by where
        // it leads, so sockets that the classes before this one left closing cannot lower it. On a starved machine a
        // listener whose heartbeat timed out may be between two connections: one in a hundred may be.
        int running = f.listeners() + 1;
        assertTrue(
                f.farmConnections() >= running - running / 100 && f.farmConnections() <= running + 50,
                f.farmConnections() + " connections to the publishers for " + running + " listeners");
        // The whole process's growth, the test's own HTTP connections to the node (counted twice, client and server
        // side) included: nothing else per listener.
        assertTrue(
                f.descriptors() <= f.listeners() + 50,
                "descriptors grew by " + f.descriptors() + " for " + f.listeners() + " listeners");
        assertEquals(0, f.threads(), "node threads grew");
    }
}
