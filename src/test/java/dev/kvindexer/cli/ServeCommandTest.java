package dev.kvindexer.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.Main;
import dev.kvindexer.config.AccessLogConfig;
import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.config.DurabilityConfig;
import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.InexactStreamPolicy;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.config.SelectServiceLimitsConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.config.SlotTrackerConfig;
import dev.kvindexer.select.SelectionConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The serve flags become the configuration the node starts from. */
class ServeCommandTest {
    /** {@code kvindexer <name> args...} parsed as Main parses it, with {@code env} as the environment. */
    static <T> T command(String name, Map<String, String> env, String... args) {
        String[] all = new String[args.length + 1];
        all[0] = name;
        System.arraycopy(args, 0, all, 1, args.length);
        CommandLine root = Main.commandLine(all, env);
        root.parseArgs(all);
        return root.getSubcommands().get(name).getCommand();
    }

    static ServeCommand serve(Map<String, String> env, String... args) {
        return command("serve", env, args);
    }

    static SlotTrackerCommand slotTracker(Map<String, String> env, String... args) {
        return command("slot-tracker", env, args);
    }

    private static ServeConfig parse(String... args) {
        return serve(Map.of(), args).config();
    }

    @Test
    void theSlotTrackerRunsBesideTheIndexerOnlyWhenItsPortIsGiven() {
        assertNull(serve(Map.of(), "--host", "127.0.0.1").slotTracker());
        ServeCommand command = serve(Map.of(), "--host", "127.0.0.1", "--slot-tracker-port", "9191");
        assertEquals(SlotTrackerConfig.on("127.0.0.1", 9191), command.slotTracker());
    }

    @Test
    void accessLogFlagsNameTheFileTheTraceHeaderAndTheClock() {
        assertNull(parse().accessLog(), "off by default");
        assertEquals(
                new AccessLogConfig(java.nio.file.Path.of("/var/log/a.log"), "x-trace-id", false),
                parse("--access-log", "/var/log/a.log").accessLog());
        assertEquals(
                new AccessLogConfig(java.nio.file.Path.of("a.log"), "x-request-id", true),
                parse("--access-log", "a.log", "--trace-id-header", "x-request-id", "--access-log-local-time")
                        .accessLog());
    }

    @Test
    void limitsOfUntrustedPeersHaveDefaultsFlagsAndVariables() {
        assertEquals(ServeConfig.DEFAULT_MAX_EVENT_BYTES, parse().maxEventBytes(), "64 MiB by default");
        assertEquals(HttpConfig.ofSeconds(60, 30), parse().http());
        assertEquals(1 << 20, parse("--max-event-bytes", "1048576").maxEventBytes());
        assertEquals(
                HttpConfig.ofSeconds(5, 2),
                parse("--http-idle-timeout", "5", "--http-request-timeout", "2").http());
        assertEquals(
                HttpConfig.ofSeconds(7, 30),
                serve(Map.of("KVINDEXER_HTTP_IDLE_TIMEOUT", "7")).config().http());
        assertEquals(
                HttpConfig.ofSeconds(7, 30),
                slotTracker(Map.of("KVINDEXER_SLOT_TRACKER_HTTP_IDLE_TIMEOUT", "7"))
                        .config()
                        .http());
        assertThrows(IllegalArgumentException.class, () -> parse("--max-event-bytes", "10"));
        assertThrows(IllegalArgumentException.class, () -> parse("--http-request-timeout", "0"));
    }

    @Test
    void durabilityFlagsAndTheirVariables() {
        assertEquals(DurabilityConfig.IN_MEMORY, parse().durability(), "in memory by default");
        assertEquals(
                new DurabilityConfig(
                        java.nio.file.Path.of("/var/lib/kvindexer"),
                        java.time.Duration.ofSeconds(5),
                        true,
                        InexactStreamPolicy.CLEAR),
                parse(
                                "--data-dir",
                                "/var/lib/kvindexer",
                                "--snapshot-interval",
                                "5",
                                "--recover-from-disk",
                                "--inexact-stream-policy",
                                "Clear")
                        .durability());
        assertEquals(
                java.nio.file.Path.of("/data"),
                serve(Map.of("KVINDEXER_DATA_DIR", "/data"))
                        .config()
                        .durability()
                        .dataDir());
        assertThrows(IllegalArgumentException.class, () -> parse("--inexact-stream-policy", "maybe"));
        assertThrows(IllegalArgumentException.class, () -> parse("--recover-from-disk"), "needs a data dir");
        assertThrows(
                IllegalArgumentException.class,
                () -> parse("--data-dir", "/d", "--snapshot-interval", "0"),
                "a positive interval");
    }

    @Test
    void securityFlagsAndTheirVariables() {
        assertEquals(SecurityConfig.NONE, parse().security(), "open by default, as Dynamo");
        assertEquals(
                new SecurityConfig("t0k", true, null, null),
                parse("--auth-token", "t0k", "--auth-all").security());
        assertEquals(
                "from-env",
                serve(Map.of("KVINDEXER_AUTH_TOKEN", "from-env"))
                        .config()
                        .security()
                        .authToken());
        assertThrows(IllegalArgumentException.class, () -> parse("--auth-all"), "--auth-all without a token");
        assertThrows(
                IllegalArgumentException.class, () -> parse("--tls-cert", "c.pem"), "a certificate without its key");
    }

    @Test
    void slotTrackerCommandDefaultsAreDynamos() {
        SlotTrackerCommand command = slotTracker(Map.of());
        assertEquals(
                new SlotTrackerConfig("0.0.0.0", 8091, 300_000, 10_000, HttpConfig.ofSeconds(60, 30)),
                command.config());
        SlotTrackerCommand zero = slotTracker(Map.of(), "--request-ttl-seconds", "0");
        assertThrows(IllegalArgumentException.class, zero::config);
    }

    @Test
    void withoutClusterTheNodeIsStandalone() {
        ServeConfig c = parse("--port", "9000", "--peers", "http://a:1, http://b:2");
        assertFalse(c.clustered());
        assertEquals(9000, c.port());
        assertEquals(List.of("http://a:1", "http://b:2"), c.peers());
    }

    @Test
    void clusterFlagsDefaultToALoopbackClusterNamedKvindexer() {
        ClusterConfig s = parse("--cluster").cluster();
        assertEquals(new ClusterConfig("kvindexer", List.of("127.0.0.1"), "127.0.0.1", 5701, null, null), s);
    }

    @Test
    void clusterFlagsSetNameMembersHostPortAndUrl() {
        ClusterConfig s = parse(
                        "--cluster",
                        "--cluster-name",
                        "prod",
                        "--cluster-members",
                        "10.0.0.1, 10.0.0.2:5710",
                        "--cluster-host",
                        "10.0.0.1",
                        "--cluster-port",
                        "5801",
                        "--advertise-url",
                        "http://idx-1:8090",
                        "--cluster-config",
                        "/etc/kvindexer/cluster.xml",
                        "--cluster-reconcile-interval",
                        "3",
                        "--cluster-bus-port",
                        "5802",
                        "--cluster-service-dns",
                        "kvindexer.llm.svc.cluster.local",
                        "--replication-factor",
                        "2")
                .cluster();
        assertEquals(
                new ClusterConfig(
                        "prod",
                        List.of("10.0.0.1", "10.0.0.2:5710"),
                        "10.0.0.1",
                        5801,
                        "http://idx-1:8090",
                        "/etc/kvindexer/cluster.xml",
                        Duration.ofSeconds(3),
                        5802,
                        "kvindexer.llm.svc.cluster.local",
                        2),
                s);
        assertTrue(s.sharded());
        assertEquals(
                ClusterConfig.FULL,
                parse("--cluster", "--replication-factor", "full").cluster().replicationFactor());
    }

    /**
     * Dynamo's newer selection flags: the assume-KV-reuse switch overrides the environment; keyed tracking hashes
     * are accepted and change nothing (docs/api/selection.md#accepted-but-not-applied); an unknown algorithm is an
     * error.
     */
    @Test
    void selectServiceTakesDynamosNewerFlags() {
        Map<String, String> reuseOff = Map.of("DYN_ROUTER_ASSUME_KV_REUSE", "false");
        SelectServiceCommand plain = command("select-service", Map.of());
        SelectServiceCommand reuse = command("select-service", Map.of(), "--router-assume-kv-reuse");
        SelectServiceCommand noReuse = command("select-service", Map.of(), "--no-router-assume-kv-reuse");
        assertFalse(plain.selection(reuseOff).assumeKvReuse(), "the environment decides without the flag");
        assertTrue(reuse.selection(reuseOff).assumeKvReuse(), "the flag wins over the environment");
        assertFalse(noReuse.selection(Map.of()).assumeKvReuse());
        SelectServiceCommand keyed = command(
                "select-service",
                Map.of(),
                "--router-tracking-hash",
                "keyed-xxh3-v1",
                "--router-tracking-key-file",
                "/etc/key",
                "--router-tracking-key-id",
                "k1");
        assertEquals(SelectionConfig.fromEnvironment(Map.of()), keyed.selection(Map.of()));
        SelectServiceCommand wrong = command("select-service", Map.of(), "--router-tracking-hash", "sha1");
        assertThrows(IllegalArgumentException.class, () -> wrong.selection(Map.of()));
    }

    /** docs/api/selection.md#command-line-and-environment and conformance check C20. */
    @Test
    void selectServiceFlagsAreDynamos() {
        SelectServiceCommand command = command("select-service", Map.of());
        assertEquals(
                new SelectServiceConfig(
                        "0.0.0.0",
                        8092,
                        120_000,
                        4096,
                        268_435_456L,
                        10_000,
                        0,
                        List.of(),
                        HttpConfig.ofSeconds(60, 30)),
                command.config());
        SelectServiceCommand recovering =
                command("select-service", Map.of(), "--indexer-peers", "http://a:8090, http://b:8090");
        assertEquals(
                List.of("http://a:8090", "http://b:8090"), recovering.indexer().peers());
        SelectServiceCommand synced = command(
                "select-service",
                Map.of("KVINDEXER_SELECT_SERVICE_REPLICA_SYNC_PORT", "9092"),
                "--replica-sync-peers",
                "tcp://a:9092,tcp://b:9092",
                "--selection-cache-ttl-secs",
                "1.5");
        assertEquals(9092, synced.config().replicaSyncPort());
        assertEquals(List.of("tcp://a:9092", "tcp://b:9092"), synced.config().replicaSyncPeers());
        assertEquals(1500, synced.config().cacheTtlMillis());
        SelectServiceCommand peersOnly = command("select-service", Map.of(), "--replica-sync-peers", "tcp://x:1");
        assertThrows(IllegalArgumentException.class, peersOnly::config, "C20: peers need a port");
        SelectServiceCommand zero = command("select-service", Map.of(), "--replica-sync-port", "0");
        assertThrows(IllegalArgumentException.class, zero::config, "C20: port 0 is refused");
        ServeCommand beside = serve(Map.of(), "--select-port", "8092");
        assertEquals(Integer.valueOf(8092), beside.selectPort);
        SelectServiceCommand plain = command("select-service", Map.of());
        assertEquals(SelectServiceLimitsConfig.DEFAULT, plain.config().limits());
        SelectServiceCommand bounded = command(
                "select-service",
                Map.of("KVINDEXER_SELECT_SERVICE_MAX_BOOKED_BLOCKS", "1000"),
                "--max-worker-ranks",
                "8",
                "--max-booking-blocks",
                "100");
        assertEquals(
                new SelectServiceLimitsConfig(8, 100, 1000), bounded.config().limits());
        SelectServiceCommand inverted =
                command("select-service", Map.of(), "--max-booking-blocks", "10", "--max-booked-blocks", "5");
        assertThrows(IllegalArgumentException.class, inverted::config);
        SelectServiceCommand tooMany = command("select-service", Map.of(), "--max-worker-ranks", "4097");
        assertThrows(IllegalArgumentException.class, tooMany::config, "the load accounting takes 4096 ranks a worker");
    }

    /** docs/api/selection.md#session-affinity: off by default, Dynamo's range of 1 s to a year, from env or flag. */
    @Test
    void sessionAffinityTtlIsDynamosRange() {
        SelectServiceCommand off = command("select-service", Map.of());
        assertEquals(0, off.config().sessionAffinityTtlSecs());
        SelectServiceCommand fromEnv =
                command("select-service", Map.of("KVINDEXER_SELECT_SERVICE_SESSION_AFFINITY_TTL_SECS", "3600"));
        assertEquals(3600, fromEnv.config().sessionAffinityTtlSecs());
        SelectServiceCommand year = command("select-service", Map.of(), "--session-affinity-ttl-secs", "31536000");
        assertEquals(31_536_000, year.config().sessionAffinityTtlSecs());
        for (String out : new String[] {"0", "31536001", "-1"}) {
            SelectServiceCommand refused = command("select-service", Map.of(), "--session-affinity-ttl-secs", out);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, refused::config, out);
            assertEquals("session affinity TTL must be between 1 and 31536000 seconds", e.getMessage());
        }
    }

    /** The selection service beside the indexer takes the indexer's token and TLS, and its own limits. */
    @Test
    void theSelectPortIsGuardedLikeTheIndexerPort() {
        ServeCommand serve = serve(
                Map.of("KVINDEXER_AUTH_TOKEN", "t"), "--auth-all", "--select-port", "8092", "--max-worker-ranks", "16");
        SelectServiceConfig select = serve.selectService(serve.config());
        assertEquals(0, serve.config().maxListeners(), "derived from the descriptor limit");
        assertEquals(
                5000, serve(Map.of("KVINDEXER_MAX_LISTENERS", "5000")).config().maxListeners());
        assertEquals(new SecurityConfig("t", true, null, null), select.security());
        assertEquals(16, select.limits().maxWorkerRanks());
        SelectServiceCommand standalone = command("select-service", Map.of("KVINDEXER_SELECT_SERVICE_AUTH_TOKEN", "s"));
        assertEquals(
                new SecurityConfig("s", false, null, null), standalone.config().security());
    }

    @Test
    void invalidClusterSettingsAreStartupErrors() {
        assertThrows(IllegalArgumentException.class, () -> parse("--cluster", "--cluster-members", " , "));
        assertThrows(IllegalArgumentException.class, () -> parse("--cluster", "--cluster-port", "0"));
        assertThrows(IllegalArgumentException.class, () -> parse("--cluster", "--cluster-name", " "));
        assertThrows(IllegalArgumentException.class, () -> parse("--cluster", "--cluster-reconcile-interval", "0"));
        assertThrows(IllegalArgumentException.class, () -> parse("--cluster", "--cluster-reconcile-interval", "301"));
        assertThrows(IllegalArgumentException.class, () -> parse("--cluster", "--cluster-bus-port", "65536"));
        assertThrows(IllegalArgumentException.class, () -> parse("--cluster", "--cluster-service-dns", " "));
        assertThrows(IllegalArgumentException.class, () -> parse("--cluster", "--replication-factor", "0"));
        assertThrows(IllegalArgumentException.class, () -> parse("--cluster", "--replication-factor", "8"));
        assertThrows(IllegalArgumentException.class, () -> parse("--cluster", "--replication-factor", "two"));
        assertThrows(IllegalArgumentException.class, () -> parse("--replication-factor", "2"), "needs --cluster");
    }

    @Test
    void helpNamesEveryClusterOptionWithItsEnvironmentVariable() {
        String help = Main.commandLine(new String[0], Map.of())
                .getSubcommands()
                .get("serve")
                .getUsageMessage();
        for (String env : List.of(
                "KVINDEXER_CLUSTER",
                "KVINDEXER_CLUSTER_NAME",
                "KVINDEXER_CLUSTER_MEMBERS",
                "KVINDEXER_CLUSTER_HOST",
                "KVINDEXER_CLUSTER_PORT",
                "KVINDEXER_ADVERTISE_URL",
                "KVINDEXER_CLUSTER_CONFIG",
                "KVINDEXER_CLUSTER_RECONCILE_INTERVAL",
                "KVINDEXER_CLUSTER_BUS_PORT",
                "KVINDEXER_CLUSTER_SERVICE_DNS",
                "KVINDEXER_REPLICATION_FACTOR")) {
            assertTrue(help.contains(env), env + " in\n" + help);
        }
        assertNull(parse().cluster());
    }
}
