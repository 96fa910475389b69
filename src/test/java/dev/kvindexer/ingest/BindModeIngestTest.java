package dev.kvindexer.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.ConnectingPublisher;
import dev.kvindexer.support.FreePort;
import dev.kvindexer.support.IngestHarness;
import dev.kvindexer.wire.LiveFrames;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.zeromq.ZContext;

/**
 * Bind mode (docs/protocol/zmq.md#sockets-and-roles): a registration on {@code tcp://*:port} binds, is active at once,
 * and takes the batches of an
 * engine whose PUB connects to it, again after that engine reconnects.
 */
class BindModeIngestTest {
    private static final int BLOCK = 16;

    @Test
    void aBoundListenerTakesTheBatchesOfAPublisherThatConnects() throws Exception {
        int port = FreePort.any();
        try (IngestHarness h = IngestHarness.start();
                ZContext ctx = new ZContext()) {
            h.register(new JsonObject()
                    .put("instance_id", 5)
                    .put("endpoint", "tcp://*:" + port)
                    .put("model_name", IngestHarness.MODEL)
                    .put("block_size", BLOCK));
            assertEquals("active", h.listenerStatus(5, 0), "bound, so active before any publisher is there");
            for (int engine = 0; engine < 2; engine++) {
                // A restarted engine connects again with a new PUB; its batches arrive on the new connection.
                long hash = 100 + engine;
                byte[] store = BatchEncoder.batch(
                        BatchEncoder.Format.VLLM_MAP,
                        1.0,
                        List.of(new EngineEvent.Store(new long[] {hash}, null, new int[BLOCK], BLOCK, null, null)),
                        0);
                try (ConnectingPublisher pub = new ConnectingPublisher(ctx, "tcp://127.0.0.1:" + port)) {
                    pub.sendUntil(
                            "a batch of engine " + engine + " applied",
                            IngestHarness.WAIT,
                            seq -> new byte[][] {new byte[0], LiveFrames.seqFrame(seq), store},
                            () -> h.dump().stream().anyMatch(b -> b.blockHash() == hash));
                }
            }
            assertEquals("active", h.listenerStatus(5, 0));
        }
    }
}
