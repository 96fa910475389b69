package dev.kvindexer.support;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code kvindexer serve} node in a JVM of its own, for tests that must crash a node for real (SIGKILL, no shutdown
 * hook, no leaving the cluster). It runs this test run's classpath (surefire's manifest-only booter jar works as a
 * {@code -cp}: the JVM follows its Class-Path) with the {@code --add-opens} the test JVM got, and logs to a file.
 */
public final class ChildNode implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("kvindexer listening on https?://[^:]+:(\\d+)");

    private final Process process;
    private final Path log;
    private int httpPort;

    private ChildNode(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /** Starts {@code kvindexer serve <serveArgs> --port 0}; returns at once ({@link #awaitReady} waits). */
    public static ChildNode start(Path logDir, String name, List<String> serveArgs) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(moduleOptions());
        // A small, quickly started JVM: the test runs three nodes and the engines on two cores.
        command.addAll(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), "dev.kvindexer.Main", "serve"));
        command.addAll(serveArgs);
        command.addAll(List.of("--host", "127.0.0.1", "--port", "0"));
        Path log = logDir.resolve(name + ".log");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new ChildNode(p, log);
    }

    /** The --add-opens and --add-exports this JVM was started with (Hazelcast needs them). */
    private static List<String> moduleOptions() {
        List<String> in = ManagementFactory.getRuntimeMXBean().getInputArguments();
        List<String> out = new ArrayList<>();
        for (int i = 0; i < in.size(); i++) {
            String a = in.get(i);
            if (a.startsWith("--add-opens") || a.startsWith("--add-exports")) {
                out.add(a);
                if (!a.contains("=") && i + 1 < in.size()) {
                    out.add(in.get(++i));
                }
            }
        }
        return out;
    }

    /** Waits until the node logged that it listens, which it does once its ready gate is open; returns its HTTP port. */
    public int awaitReady(Duration timeout) {
        try {
            Await.until("the node to log that it listens", timeout, () -> {
                Matcher m = LISTENING.matcher(logText());
                if (m.find()) {
                    httpPort = Integer.parseInt(m.group(1));
                    return true;
                }
                if (!process.isAlive()) {
                    throw new AssertionError("node exited with " + process.exitValue());
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
        process.destroyForcibly();
        process.waitFor();
    }

    /** The end of the node's log, for failure messages. */
    public String tail() {
        String text = logText();
        return text.length() > 4000 ? text.substring(text.length() - 4000) : text;
    }

    private String logText() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
