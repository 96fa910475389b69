package dev.kvindexer.partition;

/**
 * What one engine rank has sent a partition: blocks stored and removed, events applied, and when it last sent one.
 * Mutable, owned by the partition's actor; read there for its stats.
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

    void stored(int blocks, long nowMillis) {
        storedBlocks += blocks;
        events++;
        lastEventMillis = nowMillis;
    }

    void removed(int blocks, long nowMillis) {
        removedBlocks += blocks;
        events++;
        lastEventMillis = nowMillis;
    }

    void cleared(long nowMillis) {
        events++;
        lastEventMillis = nowMillis;
    }
}
