package dev.kvindexer.support;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code kvindexer <args>} in a JVM of its own, on the test classpath, for what only a separate process shows: a
 * SIGKILL, an exit status, a process that will not die. Its output goes to a file the test can read.
 */
public final class ChildJvm implements AutoCloseable {
    private final Process process;
    private final Path output;

    private ChildJvm(Process process, Path output) {
        this.process = process;
        this.output = output;
    }

    /** Starts {@code dev.kvindexer.Main} with the JVM options {@code jvm} and the command line {@code args}. */
    public static ChildJvm start(List<String> jvm, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String opens = System.getProperty("kvindexer.jvmOpens", "");
        if (!opens.isBlank()) {
            command.addAll(Arrays.asList(opens.trim().split("\\s+")));
        }
        command.addAll(jvm);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add("dev.kvindexer.Main");
        command.addAll(Arrays.asList(args));
        try {
            Path out = Files.createTempFile("kvindexer-child", ".log");
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            return new ChildJvm(p, out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Process process() {
        return process;
    }

    /** The exit status, or null when the process is still running after {@code timeout}. */
    public Integer awaitExit(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : null;
    }

    /** Everything the process printed so far. */
    public String output() {
        try {
            return Files.readString(output, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(cannot read " + output + ": " + e + ")";
        }
    }

    /** SIGKILL: the process gets no chance to leave a cluster or close a socket. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
        File f = output.toFile();
        if (!f.delete()) {
            f.deleteOnExit();
        }
    }
}
