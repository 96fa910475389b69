package dev.kvindexer.config;

import java.util.Locale;

/**
 * The heap the node's indexes may hold together ({@code --max-index-memory}), in bytes. Written as bytes with an
 * optional {@code k}, {@code m} or {@code g} suffix, or as a percentage of the JVM's maximum heap.
 */
public record IndexMemory(long maxBytes) {
    /** Half the heap: the rest is for requests in flight, ingest buffers and the collector's headroom. */
    public static final String DEFAULT_SPEC = "50%";

    public IndexMemory {
        if (maxBytes < 1024 * 1024) {
            throw new IllegalArgumentException("--max-index-memory must be at least 1 MiB, got " + maxBytes + " bytes");
        }
    }

    public static IndexMemory defaults() {
        return parse(DEFAULT_SPEC, Runtime.getRuntime().maxMemory());
    }

    /** Reads {@code 536870912}, {@code 512m}, {@code 2g} or {@code 40%} (of {@code maxHeap}). */
    public static IndexMemory parse(String spec, long maxHeap) {
        String s = spec == null ? "" : spec.trim().toLowerCase(Locale.ROOT);
        try {
            if (s.endsWith("%")) {
                double pct = Double.parseDouble(s.substring(0, s.length() - 1).trim());
                if (!(pct > 0 && pct <= 100)) {
                    throw new IllegalArgumentException(
                            "--max-index-memory percentage must be in (0, 100], got `" + spec + "`");
                }
                return new IndexMemory((long) (maxHeap * pct / 100));
            }
            long unit = switch (s.isEmpty() ? ' ' : s.charAt(s.length() - 1)) {
                case 'k' -> 1024L;
                case 'm' -> 1024L * 1024;
                case 'g' -> 1024L * 1024 * 1024;
                default -> 1L;
            };
            String digits = unit == 1 ? s : s.substring(0, s.length() - 1).trim();
            return new IndexMemory(Math.multiplyExact(Long.parseLong(digits), unit));
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("--max-index-memory must be bytes (e.g. 512m, 2g) or a percentage of "
                    + "the heap (e.g. 50%), got `" + spec + "`");
        }
    }
}
