package dev.kvindexer.metrics;

import java.util.Arrays;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

/**
 * A Prometheus histogram written to from every event loop: a count per bucket (not cumulative; the last is +Inf)
 * and the sum of what was observed. Rendered cumulative, with the {@code le} texts it was given.
 */
final class Histogram {
    private final double[] bounds;
    /** {@code le} label values, one per bound, as the family must spell them. */
    private final String[] le;

    private final LongAdder[] buckets;
    private final DoubleAdder sum = new DoubleAdder();

    Histogram(double[] bounds, String[] le) {
        this.bounds = bounds;
        this.le = le;
        this.buckets = new LongAdder[bounds.length + 1];
        for (int i = 0; i < buckets.length; i++) {
            buckets[i] = new LongAdder();
        }
    }

    /** With each bound's {@code le} written as the format writes a value. */
    Histogram(double[] bounds) {
        this(bounds, leOf(bounds));
    }

    private static String[] leOf(double[] bounds) {
        String[] out = new String[bounds.length];
        for (int i = 0; i < bounds.length; i++) {
            out[i] = PrometheusText.number(bounds[i]);
        }
        return out;
    }

    void observe(double v) {
        int b = 0;
        while (b < bounds.length && v > bounds[b]) {
            b++;
        }
        buckets[b].increment();
        sum.add(v);
    }

    long count() {
        long n = 0;
        for (LongAdder b : buckets) {
            n += b.sum();
        }
        return n;
    }

    double sum() {
        return sum.sum();
    }

    /** The family's {@code _bucket}, {@code _sum} and {@code _count} samples of one series, {@code labels} first. */
    void render(PrometheusText out, String name, String... labels) {
        String[] withLe = Arrays.copyOf(labels, labels.length + 2);
        withLe[labels.length] = "le";
        long cumulative = 0;
        for (int i = 0; i < buckets.length; i++) {
            cumulative += buckets[i].sum();
            withLe[labels.length + 1] = i < bounds.length ? le[i] : "+Inf";
            out.sample(name + "_bucket", cumulative, withLe);
        }
        out.sample(name + "_sum", sum.sum(), labels);
        out.sample(name + "_count", cumulative, labels);
    }
}
