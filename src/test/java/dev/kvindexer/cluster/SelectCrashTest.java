package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.cli.SelectServiceCommand;
import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ChildNode;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.FreePort;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.LoadStorm;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A selection-service replica SIGKILLed in the middle of a reservation storm. The survivors agree with each other and
 * keep every reservation the clients hold (the cluster's map has them). A booking whose answer was lost with the
 * replica may stay counted, though no client holds it, until it expires; so once the clients have freed all they
 * hold, every survivor's load returns to zero within the expiry.
 */
class SelectCrashTest {
    private static final Duration START = ChildNode.START_PATIENCE;
    private static final List<String> RANKS = List.of("1/0", "2/0");
    /**
     * Long enough that most reservations the clients hold are still unexpired when the survivors are compared (the
     * storm, then up to one of the child's 10 s passes), short enough that orphans go soon: an expired booking is
     * dropped by design, held or not, so only those younger than this are checked.
     */
    private static final int EXPIRY_SECONDS = 30;

    private static final Map<String, String> ENV =
            Map.of("DYN_ROUTER_ACTIVE_REQUEST_EXPIRY_SECS", Integer.toString(EXPIRY_SECONDS));

    private final ClusterNodes cluster = new ClusterNodes();

    @TempDir
    Path logs;

    private ChildMembers children;

    @AfterEach
    void stop() {
        if (children != null) {
            children.close();
        }
        cluster.close();
    }

    private static void registerCatalog(HttpJson http, int publisherPort) {
        for (int id = 1; id <= 2; id++) {
            assertEquals(
                    201,
                    http.post(
                                    "/workers",
                                    "{\"worker_id\":" + id + ",\"model_name\":\"model\","
                                            + "\"endpoint\":\"http://w" + id
                                            + "\",\"block_size\":4,\"kv_events_endpoint\":\"tcp://127.0.0.1:"
                                            + (publisherPort + id) + "\"}")
                            .statusCode());
        }
    }

    @Test
    void aReplicaKilledMidStormLosesAndDoublesNothing() throws Exception {
        children = new ChildMembers(logs, cluster);
        IndexerNode survivor = cluster.start();
        SelectServiceConfig config = new SelectServiceConfig(
                "127.0.0.1", 0, 120_000, 4096, 268_435_456L, 1000, 0, List.of(), HttpConfig.DEFAULT);
        HttpJson local =
                new HttpJson(SelectServiceCommand.deploy(survivor, config, SelectionConfig.fromEnvironment(ENV))
                        .actualPort());
        int doomedPort = FreePort.any();
        int otherPort = FreePort.any();
        ChildNode doomed = children.start("doomed", ENV, "--select-port", Integer.toString(doomedPort));
        ChildNode other = children.start("other", ENV, "--select-port", Integer.toString(otherPort));
        doomed.awaitReady(START);
        other.awaitReady(START);
        Await.equal(
                "cluster members",
                START,
                3,
                () -> survivor.hazelcast().getCluster().getMembers().size());
        HttpJson doomedHttp = new HttpJson(doomedPort);
        HttpJson otherHttp = new HttpJson(otherPort);
        int publishers = FreePort.any();
        for (HttpJson h : List.of(local, doomedHttp, otherHttp)) {
            Await.until("the selection service answers", START, () -> {
                try {
                    return h.get("/health").statusCode() == 200;
                } catch (RuntimeException | AssertionError notYetListening) {
                    return false; // a child is ready before its selection port opens
                }
            });
            registerCatalog(h, publishers);
        }

        List<HttpJson> live = new CopyOnWriteArrayList<>(List.of(local, doomedHttp, otherHttp));
        LoadStorm storm = new LoadStorm(() -> live);
        AtomicBoolean stop = new AtomicBoolean();
        Thread killer = new Thread(() -> {
            try {
                // Mid-storm by what was booked, not by the clock alone: a loaded machine books slowly.
                Thread.sleep(1500);
                storm.awaitWork(15, 0);
                doomed.kill();
                Thread.sleep(500);
                live.remove(doomedHttp); // clients notice the dead replica and stop asking it
                Thread.sleep(2500);
                storm.awaitWork(storm.booked.get() + 10, 0);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            stop.set(true);
        });
        killer.start();
        storm.run(6, stop);
        killer.join();
        Await.until("every uncertain reservation is settled", Duration.ofSeconds(30), () -> {
            storm.settle();
            return storm.uncertainCount() == 0;
        });
        // Both survivors are read on every poll: either may still be catching up (the child's pass runs every 10 s,
        // later on a loaded machine), so neither one's first answer is the one to wait for.
        try {
            Await.until(
                    "the survivors agree" + children.logs(),
                    Duration.ofSeconds(90),
                    () -> LoadStorm.reported(local).equals(LoadStorm.reported(otherHttp)));
        } catch (AssertionError e) {
            throw new AssertionError(
                    "local " + LoadStorm.reported(local) + " other " + LoadStorm.reported(otherHttp) + " held "
                            + storm.expected(RANKS) + " other workers "
                            + otherHttp.get("/workers").body(),
                    e);
        }
        // Compared with what the clients hold and booked less than the expiry ago (taken after the replica answers):
        // an older one may have expired by design however long the survivors took to agree.
        Map<String, String> counted = LoadStorm.reported(local);
        Map<String, String> held = storm.unexpired(RANKS, Duration.ofSeconds(EXPIRY_SECONDS));
        int checked = 0;
        for (String rank : RANKS) {
            int holding = Integer.parseInt(held.get(rank).split("/")[0]);
            int seen = Integer.parseInt(counted.get(rank).split("/")[0]);
            assertTrue(
                    seen >= holding, "no reservation a client holds is lost on " + rank + ": " + counted + " " + held);
            checked += holding;
        }
        assertTrue(
                checked > 0, "the survivors agreed before the storm's reservations expired: " + storm.expected(RANKS));
        storm.freeAll();
        Await.until("every free is settled", Duration.ofSeconds(30), () -> {
            storm.settle();
            return storm.uncertainCount() == 0;
        });
        Map<String, String> none = storm.expected(RANKS);
        assertEquals(Map.of("1/0", "0/0/0", "2/0", "0/0/0"), none);
        for (HttpJson h : List.of(local, otherHttp)) {
            // An orphan (booked, its answer lost with the replica) lasts until its expiry and the next pass after it.
            Await.equal(
                    "a survivor's loads return to what the clients hold within the expiry" + children.logs(),
                    Duration.ofSeconds(EXPIRY_SECONDS + 30),
                    none,
                    () -> LoadStorm.reported(h));
        }
        assertTrue(storm.booked.get() > 20, "the storm did work: " + storm.booked + " booked");
    }
}
