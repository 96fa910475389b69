package dev.kvindexer.config;

import java.util.Locale;

/** A size flag written as bytes with an optional {@code k}, {@code m} or {@code g} suffix, or as a share of the heap. */
final class HeapShare {
    private HeapShare() {}

    /** Reads {@code 536870912}, {@code 512m}, {@code 2g} or {@code 40%} (of {@code maxHeap}) for {@code flag}. */
    static long parse(String flag, String spec, long maxHeap) {
        String s = spec == null ? "" : spec.trim().toLowerCase(Locale.ROOT);
        try {
            if (s.endsWith("%")) {
                double pct = Double.parseDouble(s.substring(0, s.length() - 1).trim());
                if (!(pct > 0 && pct <= 100)) {
                    throw new IllegalArgumentException(flag + " percentage must be in (0, 100], got `" + spec + "`");
                }
                return (long) (maxHeap * pct / 100);
            }
            long unit = switch (s.isEmpty() ? ' ' : s.charAt(s.length() - 1)) {
                case 'k' -> 1024L;
                case 'm' -> 1024L * 1024;
                case 'g' -> 1024L * 1024 * 1024;
                default -> 1L;
            };
            String digits = unit == 1 ? s : s.substring(0, s.length() - 1).trim();
            return Math.multiplyExact(Long.parseLong(digits), unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException(flag + " must be bytes (e.g. 512m, 2g) or a percentage of "
                    + "the heap (e.g. 50%), got `" + spec + "`");
        }
    }
}
