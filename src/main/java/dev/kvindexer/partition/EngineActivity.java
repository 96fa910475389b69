package dev.kvindexer.partition;

/**
 * What one engine rank has sent a partition: blocks stored and removed, events applied, and when it last sent one.
 * Mutable, owned by the partition's actor; read there for its stats. Updated per event with no allocation.
 */
final class EngineActivity {
    long storedBlocks;
    long removedBlocks;
    long events;
    /** Wall-clock millis of the last event, or of the stream's opening while it has sent none. */
    long lastEventMillis;

    EngineActivity(long sinceMillis) {
        this.lastEventMillis = sinceMillis;
    }

    void stored(int blocks) {
        storedBlocks += blocks;
        events++;
    }

    void removed(int blocks) {
        removedBlocks += blocks;
        events++;
    }

    void cleared() {
        events++;
    }

    /** Events were applied: the clock is read once per batch, not per event. */
    void spoke(long nowMillis) {
        lastEventMillis = nowMillis;
    }
}
