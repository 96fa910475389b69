package dev.kvindexer.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.IngestHarness;
import dev.kvindexer.support.MetricsPage;
import dev.kvindexer.support.TestPublisher;
import dev.kvindexer.wire.LiveFrames;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A replay peer that answers with batches outside the range asked for cannot move a stream's watermark: those
 * batches are skipped and counted, and the live batches after the gap still apply.
 */
class ReplayRangeTest {
    private static final int BLOCK = 16;
    private static final long FAR_AHEAD = 1_000_000_000L;

    /** A root block of its own tokens, so every hash is a distinct prefix. */
    private static byte[] store(long hash) {
        int[] tokens = new int[BLOCK];
        java.util.Arrays.fill(tokens, (int) hash);
        return BatchEncoder.batch(
                BatchEncoder.Format.VLLM_MAP,
                1.0,
                List.of(new EngineEvent.Store(new long[] {hash}, null, tokens, BLOCK, null, null)),
                0);
    }

    @Test
    void aReplayedBatchPastTheRequestedEndIsSkippedAndLiveBatchesStillApply() throws Exception {
        try (IngestHarness h = IngestHarness.start();
                TestPublisher pub = new TestPublisher();
                ZContext ctx = new ZContext()) {
            ZMQ.Socket router = ctx.createSocket(SocketType.ROUTER);
            router.setLinger(0);
            router.bind("tcp://127.0.0.1:0");
            router.setReceiveTimeOut(200);
            String replayEndpoint = router.getLastEndpoint();
            AtomicInteger requests = new AtomicInteger();
            Thread replier = new Thread(
                    () -> {
                        while (!Thread.currentThread().isInterrupted()) {
                            byte[] identity = router.recv(0);
                            if (identity == null) {
                                continue;
                            }
                            while (router.hasReceiveMore()) {
                                router.recv(0);
                            }
                            requests.incrementAndGet();
                            // Asked for [0, 3): answers with a batch far ahead, then the end of the replay.
                            for (byte[] payload : new byte[][] {store(900), new byte[0]}) {
                                router.sendMore(identity);
                                router.sendMore(new byte[0]);
                                router.sendMore(LiveFrames.seqFrame(FAR_AHEAD));
                                router.send(payload);
                            }
                        }
                    },
                    "hostile-replay-router");
            replier.setDaemon(true);
            try {
                replier.start();
                h.register(new JsonObject()
                        .put("instance_id", 5)
                        .put("endpoint", pub.endpoint())
                        .put("replay_endpoint", replayEndpoint)
                        .put("model_name", IngestHarness.MODEL)
                        .put("block_size", BLOCK));
                pub.awaitSubscriber();
                pub.publish("", 3, store(3));
                Await.until("the gap [0, 3) is asked for", IngestHarness.WAIT, () -> requests.get() >= 1);
                Await.until(
                        "the far-ahead batch is counted",
                        IngestHarness.WAIT,
                        () -> MetricsPage.of(h.http())
                                        .valueOrZero(
                                                "dynamo_kvrouter_kv_cache_event_warnings{warning_kind=\"replay_out_of_range\"}")
                                >= 1);
                pub.publish("", 4, store(4));
                pub.publish("", 5, store(5));
                Await.until(
                        "live batches 3, 4 and 5 are applied",
                        IngestHarness.WAIT,
                        () -> h.counters().appliedCount("stored", "ok") == 3);
                assertEquals(0, h.counters().warningCount("stale_batch"), "no live batch may be dropped as stale");
                assertEquals(3, h.dump().size(), "the far-ahead batch's block was not applied: " + h.dump());
                String error = h.listener(5, 0).getString("last_error");
                assertTrue(error != null && error.contains("skipped_out_of_range=1"), "last_error: " + error);
            } finally {
                replier.interrupt();
                replier.join(2000);
            }
        }
    }
}
