package dev.kvindexer.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * Figures of a chaos run, as Markdown lines in {@code target/chaos/<name>.md} (and on standard output), to be copied
 * into RELIABILITY.md with the command that produced them.
 */
public final class ChaosReport {
    private final Path file;

    public ChaosReport(String name) {
        this.file = Path.of("target", "chaos", name + ".md");
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, "");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public void line(String format, Object... args) {
        String text = String.format(Locale.ROOT, format, args);
        System.out.println(text);
        try {
            Files.writeString(file, text + "\n", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Minutes of a run: {@code -Dkvindexer.chaos.minutes=N}, else {@code defaultMinutes}. */
    public static double minutes(double defaultMinutes) {
        return Double.parseDouble(System.getProperty("kvindexer.chaos.minutes", Double.toString(defaultMinutes)));
    }

    /** Resident set size of a process in bytes (Linux /proc), or -1 where that cannot be read. */
    public static long rssBytes(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    String[] parts = line.substring(6).trim().split("\\s+");
                    return Long.parseLong(parts[0]) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
