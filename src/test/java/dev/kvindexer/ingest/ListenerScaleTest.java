package dev.kvindexer.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.support.ListenerScale;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The case: ten thousand listeners on one node, every one active and applying a batch, each costing one
 * connection (about one descriptor) and no thread. The node's ceiling is filled in the chaos profile
 * ({@code ListenerScaleChaosTest}).
 */
class ListenerScaleTest {
    @Test
    void tenThousandListenersCostAboutADescriptorAndNoThreadEach() throws Exception {
        ListenerScale.Figures f = ListenerScale.run(10_000, Duration.ofSeconds(60), false);
        System.out.println(f);
        // The test's own HTTP connections to the node count twice here, client and server side.
        assertTrue(f.descriptors() >= f.listeners() && f.descriptors() <= f.listeners() + 50,
                "descriptors grew by " + f.descriptors() + " for " + f.listeners() + " listeners");
        assertEquals(0, f.threads(), "node threads grew");
    }
}
