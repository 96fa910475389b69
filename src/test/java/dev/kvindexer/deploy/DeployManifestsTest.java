package dev.kvindexer.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.Main;
import dev.kvindexer.cli.LayeredDefaults;
import dev.kvindexer.cli.SlotTrackerCommand;
import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.config.DurabilityConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.config.SlotTrackerConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.tracker.SlotTrackerVerticle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The Dockerfile and the Kubernetes manifests (no Docker engine or cluster exists here): they parse, and the ports,
 * probes and environment they name are the ones the code really serves and reads.
 */
class DeployManifestsTest {
    /** A Kubernetes dependent variable reference, {@code $(NAME)}. */
    private static final Pattern REFERENCE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

    @TempDir
    Path dir;

    private static List<Map<String, Object>> documents(String file) throws IOException {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object doc : new Yaml().loadAll(Files.readString(Path.of("deploy", file)))) {
            if (doc != null) {
                out.add(map(doc));
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object o) {
        return (List<Object>) o;
    }

    private static Map<String, Object> at(Map<String, Object> m, String... path) {
        Map<String, Object> cur = m;
        for (String p : path) {
            cur = map(cur.get(p));
        }
        return cur;
    }

    private static Map<String, Object> kind(List<Map<String, Object>> docs, String kind, String name) {
        return docs.stream()
                .filter(d -> kind.equals(d.get("kind"))
                        && name.equals(at(d, "metadata").get("name")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name));
    }

    private static Map<String, Object> onlyContainer(Map<String, Object> workload) {
        List<Object> containers = list(at(workload, "spec", "template", "spec").get("containers"));
        assertEquals(1, containers.size());
        return map(containers.get(0));
    }

    private static Map<String, Integer> ports(Map<String, Object> container) {
        Map<String, Integer> out = new HashMap<>();
        list(container.get("ports"))
                .forEach(p -> out.put((String) map(p).get("name"), (Integer) map(p).get("containerPort")));
        return out;
    }

    private static Map<String, String> env(Map<String, Object> container) {
        Map<String, String> out = new HashMap<>();
        list(container.get("env")).forEach(e -> out.put((String) map(e).get("name"), (String) map(e).get("value")));
        return out;
    }

    /**
     * The environment a pod of the workload gets, as the kubelet builds it: {@code $(NAME)} references expanded from
     * the variables before, the pod IP for its field reference. Variables from an optional Secret are left out.
     */
    private static Map<String, String> podEnvironment(Map<String, Object> container) {
        Map<String, String> out = new HashMap<>();
        for (Object e : list(container.get("env"))) {
            Map<String, Object> var = map(e);
            String name = (String) var.get("name");
            if (var.get("value") instanceof String value) {
                Matcher m = REFERENCE.matcher(value);
                StringBuilder expanded = new StringBuilder();
                while (m.find()) {
                    assertTrue(out.containsKey(m.group(1)), name + " refers to a variable set before it: " + value);
                    m.appendReplacement(expanded, Matcher.quoteReplacement(out.get(m.group(1))));
                }
                out.put(name, m.appendTail(expanded).toString());
            } else if (var.get("valueFrom") != null && map(var.get("valueFrom")).get("fieldRef") != null) {
                assertEquals(Map.of("fieldPath", "status.podIP"), at(var, "valueFrom", "fieldRef"), name);
                out.put(name, "10.1.2.3");
            } else {
                assertEquals(
                        Boolean.TRUE,
                        at(var, "valueFrom", "secretKeyRef").get("optional"),
                        name + ": only an optional Secret may be absent here");
            }
        }
        return out;
    }

    /** {@code serve} and its arguments parsed with {@code env} as the environment, as the image's java would. */
    private static CommandLine serveUnder(Map<String, String> env, List<Object> args) {
        String[] all = args.stream().map(String::valueOf).toArray(String[]::new);
        CommandLine root = Main.commandLine(all, env);
        root.parseArgs(all);
        return root.getSubcommands().get("serve");
    }

    private static String probePath(Map<String, Object> container, String probe) {
        Map<String, Object> get = at(container, probe, "httpGet");
        assertEquals("http", get.get("port"), probe + " on the http port");
        return (String) get.get("path");
    }

    private static Map<Object, Object> servicePort(Map<String, Object> service) {
        List<Object> ports = list(at(service, "spec").get("ports"));
        assertEquals(1, ports.size());
        return new HashMap<>(map(ports.get(0)));
    }

    @Test
    void theClusterManifestNamesThePortsProbesAndEnvironmentTheIndexerServes() throws Exception {
        List<Map<String, Object>> docs = documents("kvindexer.yaml");
        Map<String, Object> set = kind(docs, "StatefulSet", "kvindexer");
        Map<String, Object> container = onlyContainer(set);
        Map<String, Integer> ports = ports(container);
        assertEquals(Set.of("http", "hazelcast", "cluster-bus"), ports.keySet());
        assertEquals(ServeConfig.DEFAULT_PORT, ports.get("http"));
        assertEquals(ClusterConfig.DEFAULT_PORT, ports.get("hazelcast"));
        assertEquals(
                String.valueOf(ports.get("cluster-bus")),
                env(container).get("KVINDEXER_CLUSTER_BUS_PORT"),
                "the event bus listens on the port the manifest names");
        assertEquals("/ready", probePath(container, "readinessProbe"));
        assertEquals("/health", probePath(container, "livenessProbe"));
        assertEquals(List.of("serve", "--cluster"), container.get("args"));
        assertEquals(
                10001, at(set, "spec", "template", "spec", "securityContext").get("runAsUser"));

        Map<String, Object> headless = kind(docs, "Service", "kvindexer-cluster");
        assertEquals("None", at(headless, "spec").get("clusterIP"));
        assertEquals(Boolean.TRUE, at(headless, "spec").get("publishNotReadyAddresses"));
        assertEquals(ClusterConfig.DEFAULT_PORT, servicePort(headless).get("port"));
        assertEquals(
                "kvindexer-cluster", at(set, "spec").get("serviceName"), "pods are named under the headless Service");
        Map<String, Object> http = kind(docs, "Service", "kvindexer");
        assertEquals("http", servicePort(http).get("targetPort"));
        Object podLabels = at(set, "spec", "template", "metadata").get("labels");
        assertEquals(podLabels, at(headless, "spec").get("selector"));
        assertEquals(podLabels, at(http, "spec").get("selector"));

        // Every KVINDEXER_* variable the pods set is one `serve` reads.
        String help = Main.commandLine(new String[0], Map.of())
                .getSubcommands()
                .get("serve")
                .getUsageMessage();
        List<String> names = new ArrayList<>();
        list(container.get("env")).forEach(e -> names.add((String) map(e).get("name")));
        // Members are found by a DNS lookup of the headless Service, so scaling needs no edit of a member list.
        Object dns = list(container.get("env")).stream()
                .map(e -> map(e))
                .filter(e -> "KVINDEXER_CLUSTER_SERVICE_DNS".equals(e.get("name")))
                .findFirst()
                .map(e -> e.get("value"))
                .orElse(null);
        assertEquals("kvindexer-cluster", dns, names.toString());
        assertFalse(names.contains("KVINDEXER_CLUSTER_MEMBERS"), "no hand-kept member list");
        names.stream()
                .filter(n -> n.startsWith("KVINDEXER_"))
                .forEach(n -> assertTrue(help.contains(n), n + " in serve --help"));

        // Each of them is the variable of a real `serve` option, and serve takes the value the pod gets for it.
        Map<String, OptionSpec> byVariable = new HashMap<>();
        CommandLine serve = serveUnder(podEnvironment(container), list(container.get("args")));
        serve.getCommandSpec().options().forEach(o -> byVariable.put(LayeredDefaults.envName(Main.SERVE_ENV, o), o));
        podEnvironment(container).forEach((name, value) -> {
            if (name.startsWith("KVINDEXER_")) {
                OptionSpec option = byVariable.get(name);
                assertNotNull(option, name + " is no setting of serve");
                assertEquals(value, String.valueOf((Object) option.getValue()), name + " as " + option.longestName());
            }
        });

        // A node with a data directory, as the manifest's are, is ready once it has looked there.
        IndexerNode node = IndexerNode.start(ServeConfig.local(0)
                .withDurability(DurabilityConfig.inDirectory(dir.resolve("kvindexer"), Duration.ofHours(1))));
        try {
            HttpJson client = new HttpJson(node.httpPort());
            assertEquals(200, client.get("/ready").statusCode());
            assertEquals(200, client.get("/health").statusCode());
        } finally {
            node.close();
        }
        assertTrue(Files.isDirectory(dir.resolve("kvindexer")), "the node made its data directory");
    }

    /**
     * Every replica keeps its index on a volume of its own that outlives the pod: a claim template, mounted writable
     * where KVINDEXER_DATA_DIR points, writable by the non-root user the node runs as.
     */
    @Test
    void theDataDirectoryIsEachReplicasOwnVolumeMountedWhereTheNodeWrites() throws Exception {
        Map<String, Object> set = kind(documents("kvindexer.yaml"), "StatefulSet", "kvindexer");
        Map<String, Object> container = onlyContainer(set);
        List<Object> claims = list(at(set, "spec").get("volumeClaimTemplates"));
        assertEquals(1, claims.size());
        Map<String, Object> claim = map(claims.get(0));
        String volume = (String) at(claim, "metadata").get("name");
        assertEquals(List.of("ReadWriteOnce"), at(claim, "spec").get("accessModes"), "one replica's own volume");
        String size = String.valueOf(at(claim, "spec", "resources", "requests").get("storage"));
        assertTrue(size.matches("[1-9][0-9]*(Gi|Ti)"), "a volume for a few snapshots: " + size);

        List<Map<String, Object>> mounts = new ArrayList<>();
        list(container.get("volumeMounts")).forEach(m -> mounts.add(map(m)));
        Map<String, Object> mount = mounts.stream()
                .filter(m -> volume.equals(m.get("name")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("the claim " + volume + " is mounted: " + mounts));
        assertNotEquals(Boolean.TRUE, mount.get("readOnly"), "the node writes there");
        assertNull(mount.get("subPath"), "the volume's root, which fsGroup makes writable");
        Object podVolumes = at(set, "spec", "template", "spec").get("volumes");
        assertTrue(
                podVolumes == null || list(podVolumes).stream().noneMatch(v -> volume.equals(map(v).get("name"))),
                "no pod volume (an emptyDir) stands in for the claim");
        String path = (String) mount.get("mountPath");
        assertEquals(path, env(container).get("KVINDEXER_DATA_DIR"), "the node writes to the mounted volume");
        assertEquals(
                Path.of(path),
                serveUnder(podEnvironment(container), list(container.get("args")))
                        .getCommandSpec()
                        .findOption("--data-dir")
                        .getValue(),
                "serve reads the variable as its --data-dir");

        Map<String, Object> security = at(set, "spec", "template", "spec", "securityContext");
        assertEquals(Boolean.TRUE, security.get("runAsNonRoot"));
        assertTrue(
                security.get("fsGroup") instanceof Integer g && g > 0,
                "a fresh volume is root's: fsGroup gives the node's user its group: " + security);
        assertTrue(
                Files.readString(Path.of("Dockerfile")).contains(" " + path),
                "the image has " + path + " for the user too, so a volume mounted there by docker is writable");
    }

    /**
     * Hazelcast and the event bus carry the registrations every replica subscribes to: only the replicas may reach
     * them, while the HTTP API stays open to routers and registrars.
     */
    @Test
    void theNetworkPolicyAdmitsTheClusterPortsOnlyFromTheReplicasThemselves() throws Exception {
        List<Map<String, Object>> docs = documents("kvindexer.yaml");
        Map<String, Object> set = kind(docs, "StatefulSet", "kvindexer");
        Map<String, Integer> containerPorts = ports(onlyContainer(set));
        Object podLabels = at(set, "spec", "template", "metadata").get("labels");
        Map<String, Object> policy = kind(docs, "NetworkPolicy", "kvindexer");
        assertEquals(podLabels, at(policy, "spec", "podSelector").get("matchLabels"), "the policy covers the replicas");
        assertEquals(List.of("Ingress"), at(policy, "spec").get("policyTypes"));
        Set<String> cluster = Set.of("hazelcast", "cluster-bus");
        boolean replicasReachCluster = false;
        boolean anyoneReachesHttp = false;
        for (Object r : list(at(policy, "spec").get("ingress"))) {
            Map<String, Object> rule = map(r);
            assertTrue(rule.get("ports") != null, "a rule without ports admits every port: " + rule);
            Set<String> names = new HashSet<>();
            list(rule.get("ports")).forEach(p -> names.add((String) map(p).get("port")));
            assertTrue(containerPorts.keySet().containsAll(names), "the policy names the container's ports: " + names);
            if (rule.get("from") == null) {
                assertEquals(Set.of("http"), names, "from anywhere, HTTP only");
                anyoneReachesHttp = true;
                continue;
            }
            for (Object source : list(rule.get("from"))) {
                assertEquals(
                        Map.of("podSelector", Map.of("matchLabels", podLabels)),
                        source,
                        "the only other sources are the replicas (no namespace selector or IP block)");
            }
            replicasReachCluster |= names.containsAll(cluster);
        }
        assertTrue(replicasReachCluster, "replicas reach each other's Hazelcast and event-bus ports");
        assertTrue(anyoneReachesHttp, "routers and registrars reach HTTP");
    }

    @Test
    void theSlotTrackerManifestNamesThePortAndProbeItServes() throws Exception {
        List<Map<String, Object>> docs = documents("slot-tracker.yaml");
        Map<String, Object> container = onlyContainer(kind(docs, "Deployment", "slot-tracker"));
        assertEquals(Map.of("http", SlotTrackerConfig.DEFAULT_PORT), ports(container));
        assertEquals("/health", probePath(container, "readinessProbe"));
        assertEquals("/health", probePath(container, "livenessProbe"));
        assertEquals("slot-tracker", list(container.get("args")).get(0));
        assertEquals(
                SlotTrackerConfig.DEFAULT_PORT,
                servicePort(kind(docs, "Service", "slot-tracker")).get("port"));

        io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
        try {
            SlotTrackerVerticle tracker =
                    SlotTrackerCommand.deploy(vertx, SlotTrackerConfig.on("127.0.0.1", 0), () -> "");
            assertEquals(200, new HttpJson(tracker.actualPort()).get("/health").statusCode());
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    @Test
    void theDockerfileBuildsInTwoStagesAndRunsAsANonRootJvmThatGetsSigterm() throws IOException {
        List<String> lines = Files.readAllLines(Path.of("Dockerfile"));
        List<String> instructions = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : lines) {
            if (line.isBlank() || line.stripLeading().startsWith("#")) {
                continue;
            }
            current.append(line.strip());
            if (line.endsWith("\\")) {
                current.setLength(current.length() - 1);
                continue;
            }
            instructions.add(current.toString());
            current.setLength(0);
        }
        List<String> froms =
                instructions.stream().filter(i -> i.startsWith("FROM ")).toList();
        assertEquals(2, froms.size(), "a Maven build stage, then the runtime");
        assertTrue(froms.get(0).startsWith("FROM maven:") && froms.get(0).endsWith(" AS build"), froms.get(0));
        assertTrue(froms.get(1).startsWith("FROM eclipse-temurin:17-jre"), froms.get(1));
        String user = instructions.stream()
                .filter(i -> i.startsWith("USER "))
                .reduce((a, b) -> b)
                .orElseThrow();
        assertNotEquals("USER root", user);
        assertNotEquals("USER 0", user);
        String entrypoint = instructions.stream()
                .filter(i -> i.startsWith("ENTRYPOINT "))
                .findFirst()
                .orElseThrow();
        assertTrue(entrypoint.startsWith("ENTRYPOINT [\"java\""), "exec form, so java is PID 1: " + entrypoint);
        assertTrue(entrypoint.contains("\"/app/kvindexer.jar\""), entrypoint);
        String health = instructions.stream()
                .filter(i -> i.startsWith("HEALTHCHECK "))
                .findFirst()
                .orElseThrow();
        assertTrue(health.contains("http://127.0.0.1:" + ServeConfig.DEFAULT_PORT + "/health"), health);
        String expose = instructions.stream()
                .filter(i -> i.startsWith("EXPOSE "))
                .findFirst()
                .orElseThrow();
        assertEquals(
                "EXPOSE " + ServeConfig.DEFAULT_PORT + " " + SlotTrackerConfig.DEFAULT_PORT + " "
                        + ClusterConfig.DEFAULT_PORT,
                expose);
        assertTrue(instructions.contains("CMD [\"serve\"]"));
    }
}
