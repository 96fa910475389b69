package dev.kvindexer.config;

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
        return new IndexMemory(HeapShare.parse("--max-index-memory", spec, maxHeap));
    }
}
