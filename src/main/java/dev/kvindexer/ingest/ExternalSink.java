package dev.kvindexer.ingest;

import dev.kvindexer.wire.MalformedBatchException;

/**
 * A stream outside the partitions that decodes and applies its own batches by its own rules: no sequence tracking,
 * no replay. The poller thread calls it with each message's payload; it must not block.
 */
public non-sealed interface ExternalSink extends BatchSink {
    /** Names the stream in logs and listener views, such as {@code service=<key>}. */
    String name();

    /**
     * Decodes one payload and hands its events on; {@code applied} runs once they have been applied, which frees
     * the batch's in-flight slot and memory.
     *
     * @return the events refused while decoding; the others were handed on
     * @throws MalformedBatchException the payload cannot be read at all: nothing was handed on, {@code applied} never
     *     runs
     */
    Refused deliver(byte[] payload, Runnable applied) throws MalformedBatchException;

    /** Events of a payload refused one by one, with the first one's reason. */
    record Refused(int count, String first) {
        public static final Refused NONE = new Refused(0, null);
    }
}
