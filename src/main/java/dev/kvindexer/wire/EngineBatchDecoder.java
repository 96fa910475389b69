package dev.kvindexer.wire;

import dev.kvindexer.event.EventBatch;

/** STUB (replaced by the wire branch). */
public final class EngineBatchDecoder {
    public EngineBatchDecoder(int partitionBlockSize) {
    }

    public EventBatch decode(long seq, byte[] payload) throws MalformedBatchException {
        throw new MalformedBatchException("stub");
    }
}
