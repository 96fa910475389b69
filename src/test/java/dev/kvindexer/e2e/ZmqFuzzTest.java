package dev.kvindexer.e2e;

import static dev.kvindexer.support.IngestHarness.awaitIdle;
import static dev.kvindexer.support.IngestHarness.truth;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.sim.HeldBlock;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.SyntheticPrompts;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.IngestHarness;
import dev.kvindexer.support.MetricsPage;
import dev.kvindexer.support.Mutations;
import dev.kvindexer.support.TestPublisher;
import dev.kvindexer.wire.LiveFrames;
import io.vertx.core.json.JsonObject;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * 100,000 damaged messages through a real ZMQ socket into a real node, beside an honest engine: every class of bad
 * input a publisher can send (mutated batches, random bytes, wrong frame counts, short seq frames, declared lengths
 * of gigabytes, deep nesting, ranks out of bounds, seqs out of order). The listener never dies, the honest engine's
 * blocks stay exact, and once the fuzzed publisher restarts cleanly its blocks are exactly what it then sends.
 */
class ZmqFuzzTest {
    private static final int BLOCK = 16;
    private static final int MESSAGES = 100_000;
    private static final long FUZZED = 1;
    private static final long HONEST = 2;
    private static final long RESEND_NANOS = 500_000_000L;

    @Test
    void aHundredThousandDamagedMessagesNeitherStopIngestNorCorruptTheIndex() throws Exception {
        try (IngestHarness h = IngestHarness.start();
                TestPublisher fuzzed = new TestPublisher(0)) {
            SimulatedEngine honest = h.engine(EngineConfig.local(HONEST, 0).withCache(BLOCK, 256, 0));
            h.registerAndSubscribe(honest);
            h.register(new JsonObject()
                    .put("instance_id", FUZZED)
                    .put("endpoint", fuzzed.endpoint())
                    .put("model_name", IngestHarness.MODEL)
                    .put("block_size", BLOCK));
            fuzzed.awaitSubscriber();

            SplittableRandom rnd = new SplittableRandom(0xf022L);
            List<byte[]> seeds = seeds(rnd);
            SyntheticPrompts prompts = SyntheticPrompts.standard(99, BLOCK);
            long seq = 0;
            for (int i = 0; i < MESSAGES; i++) {
                if (i % 1000 == 0) {
                    honest.submit(prompts.next());
                }
                seq = sendDamaged(fuzzed, rnd, seeds, seq);
            }
            // ZMQ keeps a connection's order: once this batch is in, every damaged message before it was handled.
            // A damaged message that breaks the protocol drops the connection, and what the publisher had queued for
            // it goes with it (so would this batch, were it queued behind one): it is sent again until it is in.
            int[] tokens = rnd.ints(BLOCK, 0, 50_000).toArray();
            byte[] last = BatchEncoder.batch(
                    BatchEncoder.Format.VLLM_MAP,
                    1.0,
                    List.of(new EngineEvent.Store(new long[] {7001}, null, tokens, BLOCK, null, null)),
                    0);
            fuzzed.publish("", 0, last);
            awaitIdle(honest);
            long[] sentAt = {System.nanoTime()};
            Await.until("the last batch after the fuzz is applied", IngestHarness.WAIT, () -> {
                if (System.nanoTime() - sentAt[0] > RESEND_NANOS) {
                    fuzzed.publish("", 0, last);
                    sentAt[0] = System.nanoTime();
                }
                return worker(h.dump(), FUZZED).stream().anyMatch(b -> b.blockHash() == 7001);
            });

            assertEquals("active", h.listenerStatus(FUZZED, 0), "the fuzzed listener never died");

            // What the fuzz stored goes with its worker, and the honest engine's blocks were never touched.
            h.post(
                    "/unregister",
                    new JsonObject().put("instance_id", FUZZED).put("model_name", IngestHarness.MODEL),
                    200);
            h.awaitDumpEquals("only the honest engine's blocks, exactly", truth(honest));

            assertEquals(200, h.http().get("/health").statusCode());
            assertEquals(200, h.http().get("/ready").statusCode());
            assertEquals("active", h.listenerStatus(HONEST, 0));
            MetricsPage metrics = MetricsPage.of(h.http());
            assertEquals(0.0, metrics.value("kvindexer_ingest_restarts_total"));
            assertTrue(metrics.value("kvindexer_decode_errors_total{kind=\"frame\"}") > 1000, metrics.toString());
            assertTrue(metrics.value("kvindexer_decode_errors_total{kind=\"batch\"}") > 1000, metrics.toString());
            assertTrue(metrics.value("kvindexer_decode_errors_total{kind=\"event\"}") > 100, metrics.toString());
        }
    }

    private static Set<HeldBlock> worker(Set<HeldBlock> dump, long worker) {
        return dump.stream().filter(b -> b.worker() == worker).collect(Collectors.toSet());
    }

    /** Valid batches of every format to damage: chains of stores, removals, clears, ranks. */
    private static List<byte[]> seeds(SplittableRandom rnd) {
        List<byte[]> out = new ArrayList<>();
        for (BatchEncoder.Format format : BatchEncoder.Format.values()) {
            for (int i = 0; i < 20; i++) {
                int blocks = 1 + rnd.nextInt(4);
                long[] hashes = rnd.longs(blocks).toArray();
                List<EngineEvent> events = new ArrayList<>();
                events.add(new EngineEvent.Store(
                        hashes,
                        rnd.nextBoolean() ? null : rnd.nextLong(),
                        rnd.ints(blocks * BLOCK, 0, 50_000).toArray(),
                        BLOCK,
                        rnd.nextBoolean() ? null : "cpu",
                        null));
                if (rnd.nextInt(3) == 0) {
                    events.add(new EngineEvent.Remove(new long[] {hashes[0]}, null));
                }
                if (rnd.nextInt(10) == 0) {
                    events.add(new EngineEvent.ClearAll());
                }
                out.add(BatchEncoder.batch(format, 1.0, events, rnd.nextInt(4) == 0 ? null : rnd.nextInt(3)));
            }
        }
        return out;
    }

    /** Sends one damaged message; returns the next seq to use. */
    private static long sendDamaged(TestPublisher pub, SplittableRandom rnd, List<byte[]> seeds, long seq) {
        byte[] topic = new byte[0];
        int kind = rnd.nextInt(100);
        if (kind < 70) {
            pub.sendFrames(
                    topic, LiveFrames.seqFrame(seq), Mutations.mutate(seeds.get(rnd.nextInt(seeds.size())), rnd));
        } else if (kind < 78) {
            byte[] junk = new byte[rnd.nextInt(300)];
            rnd.nextBytes(junk);
            pub.sendFrames(topic, LiveFrames.seqFrame(seq), junk);
        } else if (kind < 83) {
            byte[][] frames = new byte[1 + rnd.nextInt(5)][];
            Arrays.fill(frames, seeds.get(0));
            pub.sendFrames(frames.length == 3 ? new byte[][] {topic, seeds.get(0)} : frames);
        } else if (kind < 86) {
            pub.sendFrames(topic, new byte[rnd.nextInt(8)], seeds.get(rnd.nextInt(seeds.size())));
        } else if (kind < 93) {
            pub.sendFrames(topic, LiveFrames.seqFrame(seq), bomb(rnd));
        } else if (kind < 96) {
            pub.sendFrames(
                    topic,
                    LiveFrames.seqFrame(seq),
                    BatchEncoder.batch(
                            BatchEncoder.Format.VLLM_MAP,
                            1.0,
                            List.of(new EngineEvent.ClearAll()),
                            EventBatch.MAX_RANK + 1 + rnd.nextInt(1 << 20)));
        } else {
            // Out of order: a seq from anywhere, as a confused or restarted publisher sends.
            pub.sendFrames(topic, LiveFrames.seqFrame(rnd.nextLong()), seeds.get(rnd.nextInt(seeds.size())));
            return seq + 1;
        }
        return seq + 1;
    }

    /** A batch envelope around a value whose header declares far more than follows, or that nests very deep. */
    private static byte[] bomb(SplittableRandom rnd) {
        ByteBuffer b;
        switch (rnd.nextInt(4)) {
            case 0 ->
                b = ByteBuffer.allocate(16)
                        .put(new byte[] {(byte) 0x93, 0x01, (byte) 0xdd})
                        .putInt(0x7fffffff);
            case 1 ->
                b = ByteBuffer.allocate(16)
                        .put(new byte[] {(byte) 0x93, 0x01, (byte) 0xdf})
                        .putInt(0x30000000);
            case 2 ->
                b = ByteBuffer.allocate(16)
                        .put(new byte[] {(byte) 0x93, 0x01, (byte) 0xc6})
                        .putInt(0x7ffffff0);
            default -> {
                byte[] deep = new byte[2 + 20_000];
                deep[0] = (byte) 0x93;
                deep[1] = 0x01;
                Arrays.fill(deep, 2, deep.length, (byte) 0x91);
                return deep;
            }
        }
        return Arrays.copyOf(b.array(), b.position());
    }
}
