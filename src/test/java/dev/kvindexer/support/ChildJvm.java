package dev.kvindexer.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code kvindexer <args>} in a JVM of its own, for what only a separate process shows: a SIGKILL, an exit status, a
 * process that will not die, its resident memory. It runs this test run's classpath (surefire's manifest-only booter
 * jar works as a {@code -cp}: the JVM follows its Class-Path) with the {@code --add-opens} the test JVM got, and
 * writes its output to a file the test can read.
 */
public final class ChildJvm implements AutoCloseable {
    private final Process process;
    private final Path output;
    private final boolean ownsOutput;

    private ChildJvm(Process process, Path output, boolean ownsOutput) {
        this.process = process;
        this.output = output;
        this.ownsOutput = ownsOutput;
    }

    /** Starts {@code dev.kvindexer.Main} with the JVM options {@code jvm} and the command line {@code args}. */
    public static ChildJvm start(List<String> jvm, String... args) {
        try {
            return start(Files.createTempFile("kvindexer-child", ".log"), true, jvm, List.of(args));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** As {@link #start(List, String...)}, writing to {@code output}, which stays when the process is closed. */
    public static ChildJvm start(Path output, List<String> jvm, List<String> args) {
        return start(output, false, jvm, args, java.util.Map.of());
    }

    /** As {@link #start(Path, List, List)} with {@code env} added to this process's environment. */
    public static ChildJvm start(Path output, List<String> jvm, List<String> args, java.util.Map<String, String> env) {
        return start(output, false, jvm, args, env);
    }

    private static ChildJvm start(Path output, boolean ownsOutput, List<String> jvm, List<String> args) {
        return start(output, ownsOutput, jvm, args, java.util.Map.of());
    }

    /** As {@link #start(List, String...)} with another main class of this run's classpath (a test's helper). */
    public static ChildJvm startMain(String mainClass, List<String> jvm, String... args) {
        try {
            return start(
                    Files.createTempFile("kvindexer-child", ".log"),
                    true,
                    mainClass,
                    jvm,
                    List.of(args),
                    java.util.Map.of());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ChildJvm start(
            Path output, boolean ownsOutput, List<String> jvm, List<String> args, java.util.Map<String, String> env) {
        return start(output, ownsOutput, "dev.kvindexer.Main", jvm, args, env);
    }

    private static ChildJvm start(
            Path output,
            boolean ownsOutput,
            String mainClass,
            List<String> jvm,
            List<String> args,
            java.util.Map<String, String> env) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(moduleOptions());
        command.addAll(jvm);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(args);
        try {
            ProcessBuilder builder =
                    new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
            builder.environment().putAll(env);
            Process p = builder.start();
            return new ChildJvm(p, output, ownsOutput);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
            return "";
        }
    }

    /** The end of the output, for failure messages. */
    public String tail() {
        String text = output();
        return text.length() > 4000 ? text.substring(text.length() - 4000) : text;
    }

    /** SIGKILL: the process ends at once, without a shutdown hook, a word to its cluster or a closed socket. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
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
        if (ownsOutput) {
            try {
                Files.deleteIfExists(output);
            } catch (IOException e) {
                output.toFile().deleteOnExit();
            }
        }
    }
}
