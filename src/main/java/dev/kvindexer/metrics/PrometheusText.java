package dev.kvindexer.metrics;

/**
 * Writes families in the Prometheus text exposition format 0.0.4. Our domain families go through here rather than
 * Micrometer because Dynamo's names must come out exactly: Micrometer appends {@code _total} to every counter, and
 * {@code dynamo_kvrouter_kv_cache_events_applied} has none.
 */
public final class PrometheusText {
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final StringBuilder out = new StringBuilder(4096);

    /** Starts a family: its HELP and TYPE lines. */
    public PrometheusText family(String name, String type, String help) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        return this;
    }

    /** A sample without labels. */
    public PrometheusText sample(String name, double value) {
        out.append(name).append(' ');
        return value(value);
    }

    /** A sample with labels given as name, value, name, value... */
    public PrometheusText sample(String name, double value, String... labels) {
        out.append(name).append('{');
        for (int i = 0; i < labels.length; i += 2) {
            if (i > 0) {
                out.append(',');
            }
            out.append(labels[i]).append("=\"");
            escape(labels[i + 1]);
            out.append('"');
        }
        out.append("} ");
        return value(value);
    }

    /** Appends text already in the exposition format (another registry's scrape). */
    public PrometheusText raw(String text) {
        out.append(text);
        return this;
    }

    private PrometheusText value(double v) {
        appendNumber(out, v).append('\n');
        return this;
    }

    /** A value as the format writes it: whole numbers without a fraction, infinities as {@code +Inf}/{@code -Inf}. */
    public static String number(double v) {
        return appendNumber(new StringBuilder(24), v).toString();
    }

    private static StringBuilder appendNumber(StringBuilder sb, double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return sb.append((long) v);
        }
        if (Double.isInfinite(v)) {
            return sb.append(v > 0 ? "+Inf" : "-Inf");
        }
        return sb.append(v);
    }

    private void escape(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' || c == '"') {
                out.append('\\').append(c);
            } else if (c == '\n') {
                out.append("\\n");
            } else {
                out.append(c);
            }
        }
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
