package dev.kvindexer.metrics;

import dev.kvindexer.event.PartitionKey;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Whether KV-aware routing finds anything, per partition: the fraction of each query's tokens its best instance
 * already holds, queries nothing matched, and how many instances matched. Recorded from every event loop.
 */
public final class QueryQuality {
    static final String RATIO = "kvindexer_query_match_ratio";
    static final String ZERO = "kvindexer_query_zero_match_total";
    static final String INSTANCES = "kvindexer_query_matching_instances";
    /** Upper bounds of the matched-fraction buckets; the first holds the queries nothing matched. */
    private static final double[] RATIO_BOUNDS = {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1};

    private static final double[] INSTANCE_BOUNDS = {0, 1, 2, 4, 8, 16, 32, 64, 128};

    private static final Comparator<PartitionKey> PARTITION_ORDER =
            Comparator.comparing(PartitionKey::modelName).thenComparing(PartitionKey::routingGroup);

    private final ConcurrentHashMap<PartitionKey, Series> partitions = new ConcurrentHashMap<>();

    /** What a partition's queries matched so far. */
    public record Totals(
            String model, String routingGroup, long queries, long zeroMatch, double ratioSum, long instancesSum) {}

    private static final class Series {
        final Histogram ratio = new Histogram(RATIO_BOUNDS);
        final Histogram instances = new Histogram(INSTANCE_BOUNDS);
        final LongAdder zero = new LongAdder();
    }

    /**
     * One answered query of {@code queryTokens} tokens (a whole number of blocks for hash queries): its best instance
     * holds a prefix of {@code matchedTokens} in some tier, and {@code instances} instances hold at least one block.
     * A query shorter than one block of {@code blockSize} tokens cannot match anything and is not counted.
     */
    public void record(PartitionKey partition, int blockSize, long queryTokens, long matchedTokens, int instances) {
        if (queryTokens < Math.max(1, blockSize)) {
            return;
        }
        Series s = partitions.computeIfAbsent(partition, k -> new Series());
        s.ratio.observe(Math.min(1.0, (double) matchedTokens / queryTokens));
        s.instances.observe(instances);
        if (matchedTokens == 0) {
            s.zero.increment();
        }
    }

    /** Drops the series of partitions not in {@code live}: a removed partition stops being exported. */
    public void retain(Set<PartitionKey> live) {
        partitions.keySet().retainAll(live);
    }

    /** The totals of every partition queried so far, in (model, routing group) order. */
    public List<Totals> totals() {
        return sorted().stream()
                .map(e -> new Totals(
                        e.getKey().modelName(),
                        e.getKey().routingGroup(),
                        e.getValue().ratio.count(),
                        e.getValue().zero.sum(),
                        e.getValue().ratio.sum(),
                        (long) e.getValue().instances.sum()))
                .toList();
    }

    private List<Map.Entry<PartitionKey, Series>> sorted() {
        return partitions.entrySet().stream()
                .sorted(Map.Entry.comparingByKey(PARTITION_ORDER))
                .toList();
    }

    public void render(PrometheusText out) {
        List<Map.Entry<PartitionKey, Series>> sorted = sorted();
        out.family(
                RATIO,
                "histogram",
                "Fraction of each query's tokens that its best-matching instance holds as a "
                        + "cached prefix in any tier, by partition.");
        sorted.forEach(e -> e.getValue().ratio.render(out, RATIO, labels(e.getKey())));
        out.family(ZERO, "counter", "Queries no instance held a single block of, by partition.");
        sorted.forEach(e -> out.sample(ZERO, e.getValue().zero.sum(), labels(e.getKey())));
        out.family(INSTANCES, "histogram", "Instances holding at least the first block of each query, by partition.");
        sorted.forEach(e -> e.getValue().instances.render(out, INSTANCES, labels(e.getKey())));
    }

    private static String[] labels(PartitionKey key) {
        return new String[] {"model", key.modelName(), "tenant", key.routingGroup()};
    }
}
