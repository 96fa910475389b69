package dev.kvindexer.select;

import java.util.random.RandomGenerator;

/**
 * Picks a rank from the candidates' costs (docs/api/selection.md#picking): at temperature 0 the cheapest, ties broken uniformly at
 * random; above it, a draw from the softmax of the costs min-max normalized and divided by the temperature.
 */
public final class RankPicker {
    private RankPicker() {}

    /** The index of the chosen candidate; {@code logits} is non-empty. */
    public static int pick(double[] logits, double temperature, RandomGenerator random) {
        return temperature == 0 ? cheapest(logits, random) : sample(logits, temperature, random);
    }

    private static int cheapest(double[] logits, RandomGenerator random) {
        int choice = 0;
        int tied = 1;
        double best = logits[0];
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] < best) {
                best = logits[i];
                choice = i;
                tied = 1;
            } else if (logits[i] == best && random.nextInt(++tied) == 0) {
                choice = i; // reservoir sampling: each of the k ties so far is kept with probability 1/k
            }
        }
        return choice;
    }

    /** The softmax probabilities the sampler draws from. */
    public static double[] probabilities(double[] logits, double temperature) {
        double[] c = logits.clone();
        double lo = min(c);
        double hi = max(c);
        if (!Double.isFinite(hi - lo)) {
            double norm = Math.max(Math.abs(lo), Math.abs(hi));
            for (int i = 0; i < c.length; i++) {
                c[i] /= norm;
            }
            lo = min(c);
            hi = max(c);
        }
        double[] p = new double[c.length];
        if (lo == hi) {
            java.util.Arrays.fill(p, 1.0 / c.length);
            return p;
        }
        double sum = 0;
        for (int i = 0; i < c.length; i++) {
            p[i] = Math.exp(-(c[i] - lo) / ((hi - lo) * temperature));
            sum += p[i];
        }
        for (int i = 0; i < c.length; i++) {
            p[i] /= sum;
        }
        return p;
    }

    private static int sample(double[] logits, double temperature, RandomGenerator random) {
        double[] p = probabilities(logits, temperature);
        double u = random.nextDouble();
        double cumulative = 0;
        for (int i = 0; i < p.length; i++) {
            cumulative += p[i];
            if (cumulative >= u) {
                return i;
            }
        }
        return p.length - 1;
    }

    private static double min(double[] c) {
        double m = c[0];
        for (double v : c) {
            m = Math.min(m, v);
        }
        return m;
    }

    private static double max(double[] c) {
        double m = c[0];
        for (double v : c) {
            m = Math.max(m, v);
        }
        return m;
    }
}
