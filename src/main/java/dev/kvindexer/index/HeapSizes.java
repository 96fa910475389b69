package dev.kvindexer.index;

/**
 * Heap sizes of the index's side structures, from their entry counts: fastutil's open hash maps keep a power-of-two
 * table at a load of at most 0.75, so a map's arrays follow from its size; the map object and array headers add a
 * constant.
 */
final class HeapSizes {
    /** A map object with its key and value array headers. */
    static final long MAP_OVERHEAD = 96;

    private HeapSizes() {}

    /** A fastutil open hash map of {@code size} entries whose key and value take {@code slotBytes} together. */
    static long openHashMap(long size, int slotBytes) {
        long capacity = Long.highestOneBit(Math.max(2, (size * 4 + 2) / 3) * 2 - 1);
        return MAP_OVERHEAD + capacity * slotBytes;
    }
}
