package dev.kvindexer.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.DurabilityConfig;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.MetricsPage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * deploy/prometheus's alert rules: they parse as a Prometheus rule file, each is complete and documented in the
 * operations guide, and every metric family an expression names is one a real node declares on /metrics (a node with
 * a worker, an event and a query behind it, so that families with samples appear, and a data directory, whose
 * families only such a node declares), with rate() and increase() only over counters.
 */
class AlertRulesTest {
    private static final Path RULES = Path.of("deploy", "prometheus", "kvindexer-alerts.yaml");
    private static final Path GUIDE = Path.of("docs", "operations.md");
    private static final Pattern METRIC = Pattern.compile("\\b((?:kvindexer|dynamo)_[a-zA-Z0-9_]+)");
    private static final Pattern RATE =
            Pattern.compile("\\b(?:rate|irate|increase)\\s*\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)");
    private static final Pattern HISTOGRAM_PART = Pattern.compile("(.+)_(bucket|sum|count)$");

    /** Family name to its type, from the # TYPE lines of a real node's /metrics. */
    private static Map<String, String> exported;

    /** Set before the node starts: JUnit's own extensions run before those a test registers. */
    @TempDir
    static Path dataDir;

    @RegisterExtension
    static final LocalNode indexer =
            new LocalNode(c -> c.withDurability(DurabilityConfig.inDirectory(dataDir, Duration.ofHours(1))));

    @BeforeAll
    static void scrapeARealNode() throws Exception {
        indexer.storeOneBlockAndQueryIt();
        indexer.startGrpc();
        assertEquals(
                404,
                indexer.http()
                        .post("/query", "{\"model_name\":\"nobody\",\"token_ids\":[0,1,2,3]}")
                        .statusCode());
        exported = MetricsPage.of(indexer.http()).types();
    }

    private static List<Map<String, Object>> rules() throws IOException {
        Map<String, Object> file = map(new Yaml().load(Files.readString(RULES)));
        assertEquals(Set.of("groups"), file.keySet(), "a rule file holds groups and nothing else");
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object g : list(file.get("groups"))) {
            Map<String, Object> group = map(g);
            assertTrue(group.get("name") instanceof String, "every group is named: " + group);
            List<Object> rules = list(group.get("rules"));
            assertFalse(rules.isEmpty(), "group " + group.get("name") + " has rules");
            rules.forEach(r -> out.add(map(r)));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        assertTrue(o instanceof Map, "a mapping: " + o);
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object o) {
        assertTrue(o instanceof List, "a list: " + o);
        return (List<Object>) o;
    }

    /** The family a series name belongs to: a histogram's _bucket, _sum and _count are its own. */
    private static String family(String series) {
        if (exported.containsKey(series)) {
            return series;
        }
        Matcher m = HISTOGRAM_PART.matcher(series);
        if (m.matches() && "histogram".equals(exported.get(m.group(1)))) {
            return m.group(1);
        }
        return series;
    }

    @Test
    void everyRuleIsACompleteAlert() throws IOException {
        Set<String> names = new TreeSet<>();
        for (Map<String, Object> rule : rules()) {
            String name = (String) rule.get("alert");
            assertNotNull(name, "every rule is an alert (no recording rules here): " + rule);
            assertTrue(names.add(name), "alert names are unique: " + name);
            assertTrue(rule.get("expr") instanceof String expr && !expr.isBlank(), name + " has an expression");
            Map<String, Object> labels = map(rule.get("labels"));
            assertTrue(
                    Set.of("critical", "warning", "info").contains(labels.get("severity")),
                    name + " has a severity: " + labels);
            Map<String, Object> annotations = map(rule.get("annotations"));
            assertTrue(annotations.get("summary") instanceof String, name + " has a summary");
            assertTrue(annotations.get("description") instanceof String, name + " has a description");
            if (rule.containsKey("for")) {
                assertTrue(String.valueOf(rule.get("for")).matches("\\d+[smh]"), name + ": for " + rule.get("for"));
            }
        }
        assertTrue(names.size() >= 10, "the alerts, not a stub: " + names);
    }

    @Test
    void everyAlertIsDocumentedInTheOperationsGuide() throws IOException {
        String guide = Files.readString(GUIDE);
        assertTrue(guide.contains("## Alerts"), "the guide has an Alerts section");
        for (Map<String, Object> rule : rules()) {
            String name = (String) rule.get("alert");
            assertTrue(guide.contains("`" + name + "`"), name + " is described in docs/operations.md");
        }
    }

    @Test
    void everyFamilyAnExpressionNamesIsOneTheNodeExports() throws IOException {
        Map<String, Set<String>> missing = new TreeMap<>();
        Set<String> asked = new TreeSet<>();
        for (Map<String, Object> rule : rules()) {
            String name = (String) rule.get("alert");
            Matcher m = METRIC.matcher((String) rule.get("expr"));
            while (m.find()) {
                String family = family(m.group(1));
                asked.add(family);
                if (!exported.containsKey(family)) {
                    missing.computeIfAbsent(name, k -> new TreeSet<>()).add(m.group(1));
                }
            }
        }
        assertEquals(Map.of(), missing, "series the alerts name that no node exports");
        assertTrue(
                asked.containsAll(List.of(
                        "kvindexer_ingest_degraded",
                        "dynamo_kvindexer_listeners",
                        "kvindexer_engine_last_event_age_seconds",
                        "kvindexer_ready",
                        "kvindexer_recovery_exact",
                        "kvindexer_index_memory_used_bytes",
                        "kvindexer_index_evicted_blocks_total",
                        "kvindexer_cluster_members",
                        "kvindexer_shard_missing_instances_total",
                        "dynamo_kvindexer_errors_total",
                        "kvindexer_query_zero_match_total",
                        "kvindexer_data_dir_writable",
                        "kvindexer_snapshot_last_write_timestamp_seconds",
                        "kvindexer_inexact_streams",
                        "kvindexer_grpc_requests_total",
                        "kvindexer_grpc_workers")),
                "the alerts cover ingest, engines, readiness, recovery, memory, the cluster, shards, queries and the "
                        + "data directory: " + asked);
    }

    @Test
    void ratesAreTakenOfCountersOnly() throws IOException {
        List<String> wrong = new ArrayList<>();
        for (Map<String, Object> rule : rules()) {
            Matcher m = RATE.matcher((String) rule.get("expr"));
            while (m.find()) {
                String series = m.group(1);
                String family = family(series);
                String type = exported.get(family);
                boolean counter = "counter".equals(type) && family.equals(series);
                boolean histogramPart = "histogram".equals(type) && !family.equals(series);
                if (!counter && !histogramPart) {
                    wrong.add(rule.get("alert") + ": rate of " + series + " (" + type + ")");
                }
            }
        }
        assertEquals(List.of(), wrong, "rate() and increase() only make sense over counters");
    }
}
