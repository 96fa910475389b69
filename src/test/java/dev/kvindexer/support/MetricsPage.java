package dev.kvindexer.support;

import java.util.Map;
import java.util.TreeMap;

/** Reads samples out of a Prometheus text page, for tests. */
public final class MetricsPage {
    private final String text;

    public MetricsPage(String text) {
        this.text = text;
    }

    /** Fetches {@code GET /metrics} of a service. */
    public static MetricsPage of(HttpJson http) {
        return new MetricsPage(http.get("/metrics").body());
    }

    /** The value of the sample whose name and labels are exactly {@code series}; fails when the page has none. */
    public double value(String series) {
        for (String line : text.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1).trim());
            }
        }
        throw new AssertionError("no sample " + series + " in:\n" + text);
    }

    /**
     * The value of {@code series}, or 0 while the page has no such sample: for awaiting a counter whose labels appear
     * with its first count, which a poll may come before.
     */
    public double valueOrZero(String series) {
        return has(series) ? value(series) : 0;
    }

    public boolean has(String series) {
        for (String line : text.split("\n")) {
            if (line.startsWith(series + " ")) {
                return true;
            }
        }
        return false;
    }

    /** The {@code # TYPE} of a family, or null when the page does not declare it. */
    public String type(String family) {
        String prefix = "# TYPE " + family + " ";
        for (String line : text.split("\n")) {
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length());
            }
        }
        return null;
    }

    /** Every family the page declares, with its {@code # TYPE}. */
    public Map<String, String> types() {
        Map<String, String> out = new TreeMap<>();
        for (String line : text.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                String[] parts = line.split(" ");
                out.put(parts[2], parts[3]);
            }
        }
        return out;
    }

    @Override
    public String toString() {
        return text;
    }
}
