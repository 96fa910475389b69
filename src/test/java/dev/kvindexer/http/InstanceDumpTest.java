package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.partition.PeerSnapshot;
import dev.kvindexer.recovery.SnapshotCollector;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.JsonErrors;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.TestPublisher;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code GET /dump?instance_id=} (docs/api/dynamo.md#get-dump): one instance's exact snapshot, what a peer repairing a
 * stream installs; binary only, and a clear JSON error for an id that does not parse or names no instance here.
 */
class InstanceDumpTest {
    private static final PartitionKey KEY = new PartitionKey("m", "default");

    @RegisterExtension
    final LocalNode indexer = new LocalNode();

    private HttpJson binary() {
        return indexer.http().withHeader("Accept", SnapshotWriter.MEDIA_TYPE);
    }

    /** Stores block {@code hash} holding tokens {@code t} to {@code t + 3}, as a root. */
    private void storeBlock(TestPublisher engine, long seq, long hash, int t) {
        engine.publish(
                "",
                seq,
                LocalNode.vllmBatch(new EngineEvent.Store(
                        new long[] {hash}, null, new int[] {t, t + 1, t + 2, t + 3}, 4, "GPU", null)));
    }

    @Test
    void theSnapshotHoldsTheInstanceAloneWithItsWatermark() throws Exception {
        TestPublisher one = indexer.engine();
        TestPublisher two = indexer.engine();
        indexer.register(1, 0, one);
        indexer.register(2, 0, two);
        storeBlock(one, 0, 10, 0);
        storeBlock(one, 1, 11, 4);
        storeBlock(two, 0, 20, 8);
        Await.until(
                "the events applied",
                Await.PATIENCE,
                () -> indexer.node().counters().appliedCount("stored", "ok") == 3);

        HttpResponse<byte[]> r = indexer.http().getBytes("/dump?instance_id=1", SnapshotWriter.MEDIA_TYPE);
        assertEquals(200, r.statusCode());
        assertEquals(
                SnapshotWriter.MEDIA_TYPE,
                r.headers().firstValue("content-type").orElse(""));
        PeerSnapshot s = SnapshotCollector.exactSection("node", KEY, r.body(), 1 << 20);
        assertEquals(
                Set.of(1L),
                s.events().stream().map(PeerSnapshot.Event::workerId).collect(Collectors.toSet()));
        assertEquals(
                2,
                s.events().stream()
                        .mapToInt(e -> ((KvEvent.Stored) e.event()).blockHashes().length)
                        .sum(),
                "blocks 10 and 11");
        assertEquals(List.of(new PeerSnapshot.StreamWatermark(1, 0, 1)), s.watermarks());
        assertEquals(List.of(), s.losses());
    }

    @Test
    void aBadOrUnknownInstanceIsAJsonError() {
        for (String bad : List.of("abc", "-1", "01", "", "18446744073709551616")) {
            JsonErrors.assertError(
                    400, "instance_id must be an unsigned 64-bit decimal", binary().get("/dump?instance_id=" + bad));
        }
        JsonErrors.assertError(404, "instance 5 not found", binary().get("/dump?instance_id=5"));
        JsonErrors.assertError(
                406,
                "served only as " + SnapshotWriter.MEDIA_TYPE,
                indexer.http().get("/dump?instance_id=5"));
    }
}
