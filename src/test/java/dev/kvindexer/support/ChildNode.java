package dev.kvindexer.support;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code kvindexer serve} node in a JVM of its own ({@link ChildJvm}), for tests that must crash a node for real
 * (SIGKILL, no shutdown hook, no leaving the cluster). Its HTTP port is chosen by the node and read from its log.
 */
public final class ChildNode implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("kvindexer listening on https?://[^:]+:(\\d+)");

    private final ChildJvm jvm;
    private int httpPort;

    private ChildNode(ChildJvm jvm) {
        this.jvm = jvm;
    }

    /**
     * How long a test waits for a child node to start: seconds on a quiet machine, a minute and more when the build
     * shares two cores with other work. The wait ends as soon as the node listens.
     */
    public static final Duration START_PATIENCE = Duration.ofSeconds(180);

    /** A small, quickly started JVM: tests run several nodes and the engines on two cores. */
    public static final List<String> SMALL_JVM = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

    /** Starts {@code kvindexer serve <serveArgs> --port 0}; returns at once ({@link #awaitReady} waits). */
    public static ChildNode start(Path logDir, String name, List<String> serveArgs) {
        return start(logDir, name, SMALL_JVM, serveArgs);
    }

    /** As {@link #start(Path, String, List)} with the JVM options {@code jvm}. */
    public static ChildNode start(Path logDir, String name, List<String> jvm, List<String> serveArgs) {
        return start(logDir, name, jvm, serveArgs, java.util.Map.of());
    }

    /** As {@link #start(Path, String, List, List)} with {@code env} added to the child's environment. */
    public static ChildNode start(
            Path logDir, String name, List<String> jvm, List<String> serveArgs, java.util.Map<String, String> env) {
        List<String> args = new ArrayList<>(List.of("serve"));
        args.addAll(serveArgs);
        args.addAll(List.of("--host", "127.0.0.1", "--port", "0"));
        return new ChildNode(ChildJvm.start(logDir.resolve(name + ".log"), jvm, args, env));
    }

    public boolean isAlive() {
        return jvm.process().isAlive();
    }

    /** The node's resident memory in bytes, or -1 where it cannot be read. */
    public long residentBytes() {
        return ChaosReport.rssBytes(pid());
    }

    /** The node's process id, to read its resident memory. */
    public long pid() {
        return jvm.process().pid();
    }

    /** Waits until the node logged that it listens, which it does once its ready gate is open; returns its HTTP port. */
    public int awaitReady(Duration timeout) {
        try {
            Await.until("the node to log that it listens", timeout, () -> {
                Matcher m = LISTENING.matcher(jvm.output());
                if (m.find()) {
                    httpPort = Integer.parseInt(m.group(1));
                    return true;
                }
                if (!jvm.process().isAlive()) {
                    throw new AssertionError("node exited with " + jvm.process().exitValue());
                }
                return false;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; its log ends:\n" + tail(), e);
        }
        return httpPort;
    }

    public int httpPort() {
        return httpPort;
    }

    /** SIGKILL: the process ends at once, without a shutdown hook or a word to the cluster. */
    public void kill() throws InterruptedException {
        jvm.kill();
    }

    /**
     * SIGTERM, as an orchestrator stops a pod: the node's shutdown hook closes it (a node with --data-dir writes its
     * final snapshot). Returns the exit status, or fails when the process is still running after {@code timeout}.
     */
    public int terminate(Duration timeout) throws InterruptedException {
        jvm.process().destroy();
        Integer status = jvm.awaitExit(timeout);
        if (status == null) {
            throw new AssertionError("node still running " + timeout + " after SIGTERM; its log ends:\n" + tail());
        }
        return status;
    }

    /** The end of the node's log, for failure messages. */
    public String tail() {
        return jvm.tail();
    }

    @Override
    public void close() {
        jvm.close();
    }
}
