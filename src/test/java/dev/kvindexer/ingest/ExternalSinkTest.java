package dev.kvindexer.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.TestPublisher;
import dev.kvindexer.wire.MalformedBatchException;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A stream whose sink reads its own payloads, as an API with its own event rules plugs into ingest: what it refuses is
 * counted and shown on the listener, a payload it cannot read at all is skipped, and the stream keeps going.
 */
class ExternalSinkTest {
    /** Payloads are text: "bad" cannot be read at all, "refuse:N" has N refused events, anything else is applied. */
    private static final class TextSink implements ExternalSink {
        final List<String> applied = new CopyOnWriteArrayList<>();

        @Override
        public String name() {
            return "text-sink";
        }

        @Override
        public Refused deliver(byte[] payload, Runnable done) throws MalformedBatchException {
            String text = new String(payload, StandardCharsets.UTF_8);
            if (text.equals("bad")) {
                throw new MalformedBatchException("not a batch");
            }
            if (text.startsWith("refuse:")) {
                done.run();
                return new Refused(Integer.parseInt(text.substring(7)), "refused on purpose");
            }
            applied.add(text);
            done.run();
            return Refused.NONE;
        }
    }

    @Test
    void refusedAndUnreadablePayloadsAreCountedAndTheStreamGoesOn() throws Exception {
        Vertx vertx = Vertx.vertx();
        EventCounters counters = new EventCounters();
        ZmqIngest ingest = new ZmqIngest(
                vertx,
                new ZmqIngest.Config(1, 100, ServeConfig.DEFAULT_MAX_EVENT_BYTES, ZmqIngest.Config.SUPERVISE_EVERY),
                counters,
                () -> true);
        TextSink sink = new TextSink();
        try (TestPublisher pub = new TestPublisher()) {
            Listener listener = Listener.forExternal(pub.endpoint(), 3, sink);
            ingest.start(listener).toCompletionStage().toCompletableFuture().get();
            pub.awaitSubscriber();
            assertEquals("text-sink dp_rank=3 endpoint=" + pub.endpoint(), listener.toString());

            pub.publish("", 0, "first".getBytes(StandardCharsets.UTF_8));
            pub.publish("", 1, "bad".getBytes(StandardCharsets.UTF_8));
            pub.publish("", 2, "refuse:2".getBytes(StandardCharsets.UTF_8));
            pub.publish("", 3, "last".getBytes(StandardCharsets.UTF_8));

            Await.until("the payload after the bad ones applied", Await.PATIENCE, () -> sink.applied.contains("last"));
            assertEquals(List.of("first", "last"), sink.applied);
            assertEquals(1, counters.undecodableCount(EventCounters.UNDECODABLE_BATCH));
            assertEquals(2, counters.undecodableCount(EventCounters.UNDECODABLE_EVENT));
            assertTrue(listener.lastError().contains("refused on purpose"), listener.lastError());
            assertEquals(ListenerState.ACTIVE, listener.state());
            Await.until(
                    "every in-flight slot given back",
                    Await.PATIENCE,
                    () -> ingest.inFlight().current() == 0);
        } finally {
            ingest.close();
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }
}
