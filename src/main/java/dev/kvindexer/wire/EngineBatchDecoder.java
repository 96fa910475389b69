package dev.kvindexer.wire;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.msgpack.value.ValueType;

/**
 * Decodes one stream's batches; one instance per (listener) stream because the hybrid group filter
 * learns kinds per (dp_rank, group_idx) from stores. Not thread-safe.
 *
 * <p>Accepts the vLLM and SGLang EventBatch in every era (docs/protocol/events.md): array batch {@code [ts, events,
 * rank?, ...]} or map batch {@code {ts, events, data_parallel_rank | attn_dp_rank}}, events as
 * tagged arrays or tagged maps, mixed freely. Counting rules: events with a wrongly typed field, an
 * unknown tag, a missing {@code block_hashes}/{@code block_size}, or an invalid linkage (duplicate
 * hash, parent equal to one of its own hashes) are {@code malformedEvents}; events dropped by the
 * group filter are {@code filteredEvents}; stores with another block size are
 * {@code blockSizeMismatches}. A store left with no complete block (token ids too short or absent)
 * and an empty removal produce no event and no count.
 */
public final class EngineBatchDecoder {
    private static final byte[][] BATCH_KEYS = {
        "events".getBytes(StandardCharsets.UTF_8),
        "data_parallel_rank".getBytes(StandardCharsets.UTF_8),
        "attn_dp_rank".getBytes(StandardCharsets.UTF_8),
    };
    private static final int KEY_EVENTS = 0;

    private final WireReader in = new WireReader();
    private final EventReader reader = new EventReader(in);
    private final RawEvent scratch = new RawEvent();
    private final GroupFilter filter = new GroupFilter();
    private final EventConverter converter;

    private int malformed;
    private int mismatches;
    private int filtered;

    public EngineBatchDecoder(int partitionBlockSize) {
        this(partitionBlockSize, null);
    }

    /**
     * @param defaultLora the LoRA of events that name none (a Mooncake registration's {@code lora_name}), or null
     *                    for the base model
     */
    public EngineBatchDecoder(int partitionBlockSize, String defaultLora) {
        this.converter = new EventConverter(partitionBlockSize, filter, defaultLora);
    }

    /**
     * Decodes one payload. A batch-level problem (not an array/map, fewer than 2 elements, events not
     * an array, garbage bytes) throws MalformedBatchException. A malformed single event is skipped and
     * counted in EventBatch.malformedEvents(); the rest of the batch still applies.
     */
    public EventBatch decode(long seq, byte[] payload) throws MalformedBatchException {
        if (payload == null) {
            throw new MalformedBatchException("null payload");
        }
        try {
            return decodeChecked(seq, payload);
        } catch (IOException | RuntimeException e) {
            // msgpack-java reports damage with IOException and unchecked MessagePackException subclasses
            throw new MalformedBatchException("undecodable batch seq=" + Long.toUnsignedString(seq) + ": " + e, e);
        }
    }

    /** Decodes a payload holding a single event (not a batch), as if it were a batch without rank. */
    EventBatch decodeSingleEvent(long seq, byte[] eventBytes) throws MalformedBatchException {
        try {
            startBatch(eventBytes, 0, eventBytes.length);
            List<KvEvent> out = new ArrayList<>(1);
            decodeOne(out);
            return finish(seq, EventBatch.NO_RANK, out);
        } catch (IOException | RuntimeException e) {
            throw new MalformedBatchException("undecodable event: " + e, e);
        }
    }

    private EventBatch decodeChecked(long seq, byte[] payload) throws IOException, MalformedBatchException {
        startBatch(payload, 0, payload.length);
        ValueType t = in.peekType();
        if (t == ValueType.ARRAY) {
            return decodeArrayBatch(seq);
        }
        if (t == ValueType.MAP) {
            return decodeMapBatch(seq, payload);
        }
        throw new MalformedBatchException("batch is neither an array nor a map: " + t);
    }

    private EventBatch decodeArrayBatch(long seq) throws IOException, MalformedBatchException {
        int n = in.arrayHeader();
        if (n < 2) {
            throw new MalformedBatchException("batch array has " + n + " elements");
        }
        in.skip(); // ts: informational only, any type
        List<KvEvent> out = decodeEvents();
        int rank = n >= 3 ? readRank() : EventBatch.NO_RANK;
        // elements >= 3 (e.g. a publisher id) are ignored without being read
        return finish(seq, rank, out);
    }

    /** Map batches may put the rank after the events: find both first, then decode the events. */
    private EventBatch decodeMapBatch(long seq, byte[] payload) throws IOException, MalformedBatchException {
        int n = in.mapHeader();
        int eventsAt = -1;
        int rank = EventBatch.NO_RANK;
        for (int i = 0; i < n; i++) {
            if (in.peekType() != ValueType.STRING) {
                in.skip(2);
                continue;
            }
            int k = in.matchString(BATCH_KEYS);
            if (k == KEY_EVENTS) {
                eventsAt = in.position();
                in.skip();
            } else if (k > KEY_EVENTS) {
                int r = readRank();
                if (r != EventBatch.NO_RANK) {
                    rank = r;
                }
            } else {
                in.skip();
            }
        }
        if (eventsAt < 0) {
            throw new MalformedBatchException("map batch without events");
        }
        in.reset(payload, eventsAt, payload.length - eventsAt);
        List<KvEvent> out = decodeEvents();
        return finish(seq, rank, out);
    }

    private List<KvEvent> decodeEvents() throws IOException, MalformedBatchException {
        if (in.peekType() != ValueType.ARRAY) {
            throw new MalformedBatchException("events is not an array");
        }
        int n = in.arrayHeader();
        List<KvEvent> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            decodeOne(out);
        }
        return out;
    }

    private void decodeOne(List<KvEvent> out) throws IOException {
        reader.read(scratch);
        switch (converter.convert(scratch, out)) {
            case MALFORMED -> malformed++;
            case FILTERED -> filtered++;
            case BLOCK_SIZE_MISMATCH -> mismatches++;
            default -> {}
        }
    }

    /**
     * Non-nil non-negative int → that rank; nil, negative or another type → NO_RANK
     * (docs/protocol/events.md#eventbatch-envelope); a rank over
     * {@link EventBatch#MAX_RANK} makes the whole batch malformed rather than create a phantom owner.
     */
    private int readRank() throws IOException, MalformedBatchException {
        if (in.peekType() != ValueType.INTEGER) {
            in.skip();
            return EventBatch.NO_RANK;
        }
        long v = in.integerBits();
        if (v < 0) {
            return EventBatch.NO_RANK;
        }
        if (v > EventBatch.MAX_RANK) {
            throw new MalformedBatchException(
                    "batch dp_rank " + Long.toUnsignedString(v) + " is over " + EventBatch.MAX_RANK);
        }
        return (int) v;
    }

    private void startBatch(byte[] payload, int offset, int length) throws IOException {
        in.reset(payload, offset, length);
        filter.beginBatch();
        malformed = 0;
        mismatches = 0;
        filtered = 0;
    }

    private EventBatch finish(long seq, int rank, List<KvEvent> out) {
        int late = filter.resolve(rank, out);
        if (late > 0) {
            out.removeIf(Objects::isNull);
            filtered += late;
        }
        return new EventBatch(seq, rank, Collections.unmodifiableList(out), malformed, mismatches, filtered);
    }
}
