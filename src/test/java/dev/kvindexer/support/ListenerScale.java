package dev.kvindexer.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.ingest.ListenerCapacity;
import dev.kvindexer.ingest.ListenerState;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.partition.StreamId;
import java.io.File;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Thousands of listeners on one node, registered over HTTP, against engines' publishers in a JVM of their own (it
 * has a descriptor limit of its own): a {@link PublisherFarm} whose every port serves a hundred registrations of one
 * model. Waits until every listener is active and has applied a batch, and measures what the node's descriptors and
 * threads grew by.
 */
public final class ListenerScale {
    public static final int PER_PORT = 100;
    private static final int BLOCK = 16;
    private static final String MODEL = "scale";
    private static final int REGISTERING_CLIENTS = 8;
    /** The test's own HTTP client threads, which come and go with the registering load. */
    private static final String CLIENT_THREADS = "HttpClient-";

    private static final Pattern PORTS = Pattern.compile("ports: ([\\d,]+)");

    /**
     * @param registerSeconds  all registrations answered 201
     * @param activeSeconds    after that, until every listener was active (handshake done)
     * @param appliedSeconds   after that, until every listener's partition stream had applied a batch
     * @param descriptors      growth of the node process's open descriptors
     * @param farmConnections  this process's descriptors that are connections to the publishers: the listeners' own
     * @param threads          growth of the node's threads, the test's HTTP client threads left out
     * @param processThreads   growth of /proc/self/task, JVM-internal and test threads included
     * @param capacity         the node's listener ceiling
     * @param oneMore          the answer to one registration more, when asked for
     */
    public record Figures(
            int listeners,
            double registerSeconds,
            double activeSeconds,
            double appliedSeconds,
            int descriptors,
            int farmConnections,
            int threads,
            int processThreads,
            int capacity,
            HttpResponse<String> oneMore) {
        public double descriptorsPerListener() {
            return descriptors / (double) listeners;
        }
    }

    private ListenerScale() {}

    /**
     * Runs {@code n} listeners (a multiple of {@link #PER_PORT}; 0 for as many as the node's ceiling allows) on a node
     * with the command line's 2 ingest threads; with {@code oneMore}, then tries to register one more.
     */
    public static Figures run(int listeners, Duration activeWithin, boolean oneMore) throws Exception {
        int n = listeners > 0 ? listeners : ListenerCapacity.derived() / PER_PORT * PER_PORT;
        int ports = n / PER_PORT;
        try (ChildJvm farm = ChildJvm.startMain(
                PublisherFarm.class.getName(),
                List.of("-Xmx1g", "-XX:+UseSerialGC"),
                Integer.toString(ports),
                Integer.toString(PER_PORT),
                Integer.toString(BLOCK))) {
            int[] farmPorts = awaitPorts(farm);
            IndexerNode node = IndexerNode.start(
                    new ServeConfig("127.0.0.1", 0, 2, 2, List.of(), null, "default", "default", List.of(), true, 0));
            try {
                return measure(node, n, farmPorts, activeWithin, oneMore);
            } finally {
                node.close();
            }
        }
    }

    private static Figures measure(IndexerNode node, int n, int[] ports, Duration activeWithin, boolean oneMore)
            throws Exception {
        HttpJson http = new HttpJson(node.httpPort());
        // One listener first, so what starts with the first registration is in the baseline.
        register(http, 0, ports[0]);
        int fdsBefore = descriptors();
        int tasksBefore = processThreads();
        Set<String> threadsBefore = threadNames();

        long start = System.nanoTime();
        registerAll(http, n, ports);
        long registered = System.nanoTime();
        Await.until(n + " listeners active", activeWithin, () -> active(node) == n);
        long activated = System.nanoTime();
        PartitionKey key = new PartitionKey(MODEL, "default");
        Await.until("every listener applied a batch", activeWithin, () -> {
            for (int i = 0; i < n; i++) {
                if (node.watermarks().seqOrMinusOne(new StreamId(key, i, 0)) < 0) {
                    return false;
                }
            }
            return true;
        });
        long applied = System.nanoTime();
        Set<String> added = threadNames();
        added.removeAll(threadsBefore);
        added.removeIf(name -> name.startsWith(CLIENT_THREADS));
        assertEquals(n, node.ingest().listenerCount());
        assertTrue(node.ingest().listenerCount() <= node.ingest().listenerCapacity());
        int grown = n - 1;
        Figures f = new Figures(
                grown,
                (registered - start) / 1e9,
                (activated - registered) / 1e9,
                (applied - activated) / 1e9,
                descriptors() - fdsBefore,
                connectionsTo(ports),
                added.size(),
                processThreads() - tasksBefore,
                node.ingest().listenerCapacity(),
                null);
        if (!oneMore) {
            return f;
        }
        HttpResponse<String> answer = http.post("/register", body(n, ports[0]));
        return new Figures(
                f.listeners(),
                f.registerSeconds(),
                f.activeSeconds(),
                f.appliedSeconds(),
                f.descriptors(),
                f.farmConnections(),
                f.threads(),
                f.processThreads(),
                f.capacity(),
                answer);
    }

    private static int[] awaitPorts(ChildJvm farm) {
        int[][] found = {null};
        Await.until("the publishers bound", Duration.ofSeconds(30), () -> {
            Matcher m = PORTS.matcher(farm.output());
            if (m.find()) {
                found[0] = Arrays.stream(m.group(1).split(","))
                        .mapToInt(Integer::parseInt)
                        .toArray();
                return true;
            }
            assertTrue(farm.process().isAlive(), "the publisher JVM exited: " + farm.tail());
            return false;
        });
        return found[0];
    }

    /** Registers instances 1..n-1 from a few clients at once, instance i on port i % ports. */
    private static void registerAll(HttpJson http, int n, int[] ports) throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(REGISTERING_CLIENTS);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < REGISTERING_CLIENTS; c++) {
                int first = 1 + c;
                done.add(clients.submit(() -> {
                    for (int id = first; id < n; id += REGISTERING_CLIENTS) {
                        register(http, id, ports[id % ports.length]);
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            clients.shutdownNow();
            // Gone before threads are counted.
            clients.awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    private static void register(HttpJson http, long id, int port) {
        HttpResponse<String> r = http.post("/register", body(id, port));
        assertEquals(201, r.statusCode(), r.body());
    }

    private static String body(long id, int port) {
        return "{\"instance_id\":" + id + ",\"endpoint\":\"tcp://127.0.0.1:" + port + "\",\"model_name\":\"" + MODEL
                + "\",\"block_size\":" + BLOCK + "}";
    }

    private static long active(IndexerNode node) {
        return node.registry().listeners().stream()
                .filter(l -> l.state() == ListenerState.ACTIVE)
                .count();
    }

    private static int descriptors() {
        String[] fds = new File("/proc/self/fd").list();
        return fds == null ? -1 : fds.length;
    }

    /**
     * This process's descriptors that are TCP connections to one of {@code ports}: unlike the process's whole count,
     * sockets other tests left closing do not move it.
     */
    private static int connectionsTo(int[] ports) throws IOException {
        Set<Integer> remote = new HashSet<>();
        for (int port : ports) {
            remote.add(port);
        }
        Set<String> inodes = new HashSet<>();
        for (String table : List.of("/proc/self/net/tcp", "/proc/self/net/tcp6")) {
            Path path = Path.of(table);
            if (!Files.exists(path)) {
                continue;
            }
            List<String> rows = Files.readAllLines(path);
            for (String row : rows.subList(1, rows.size())) {
                // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
                String[] c = row.trim().split("\\s+");
                String rem = c[2];
                int port = Integer.parseInt(rem.substring(rem.indexOf(':') + 1), 16);
                if (remote.contains(port)) {
                    inodes.add(c[9]);
                }
            }
        }
        int n = 0;
        File[] fds = new File("/proc/self/fd").listFiles();
        for (File fd : fds == null ? new File[0] : fds) {
            try {
                String link = Files.readSymbolicLink(fd.toPath()).toString();
                if (link.startsWith("socket:[") && inodes.contains(link.substring(8, link.length() - 1))) {
                    n++;
                }
            } catch (IOException closedMeanwhile) {
                // A descriptor closed between the listing and the read is not a connection any more.
            }
        }
        return n;
    }

    private static int processThreads() {
        String[] tasks = new File("/proc/self/task").list();
        return tasks == null ? -1 : tasks.length;
    }

    /** The names of this JVM's threads. */
    private static Set<String> threadNames() {
        Set<String> names = new TreeSet<>();
        Thread.getAllStackTraces().keySet().forEach(t -> names.add(t.getName()));
        return names;
    }
}
