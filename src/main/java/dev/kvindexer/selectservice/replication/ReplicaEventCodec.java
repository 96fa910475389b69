package dev.kvindexer.selectservice.replication;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.load.LoadEvent;
import java.io.IOException;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * Dynamo's replica-sync message (docs/api/selection.md#replica-sync): a {@code ScopedReplicaEvent} as rmp-serde writes it with field
 * names, on topic {@code dynamo.slot-tracker.v1}. Decoding reads members by name, skips unknown ones, takes any
 * integer width and a unit variant as a string or a one-entry map; every count is checked against the bytes left, so
 * a hostile peer cannot make it allocate more than its message.
 */
public final class ReplicaEventCodec {
    public static final String TOPIC = "dynamo.slot-tracker.v1";

    /** A decoded event and the process that sent it. */
    public record Received(LoadEvent event, long routerId) {}

    private ReplicaEventCodec() {}

    public static byte[] encode(LoadEvent e, long routerId) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(4);
            p.packString("model_name").packString(e.partition().modelName());
            p.packString("routing_group").packString(e.partition().routingGroup());
            p.packString("block_size").packInt(e.blockSize());
            p.packString("event").packMapHeader(5);
            p.packString("request_id").packString(e.requestId());
            p.packString("worker").packMapHeader(2);
            p.packString("worker_id");
            BoundedUnpacker.packU64(p, e.workerId());
            p.packString("dp_rank").packInt(e.dpRank());
            p.packString("data");
            if (e instanceof LoadEvent.Freed) {
                p.packString("Free");
            } else if (e instanceof LoadEvent.PrefillCompleted) {
                p.packString("MarkPrefillCompleted");
            } else if (e instanceof LoadEvent.Added a) {
                p.packMapHeader(1).packString("AddRequest").packMapHeader(4);
                p.packString("token_sequence").packArrayHeader(a.sequenceHashes().length);
                for (long h : a.sequenceHashes()) {
                    BoundedUnpacker.packU64(p, h);
                }
                p.packString("track_prefill_tokens").packBoolean(a.trackPrefill());
                p.packString("expected_output_tokens");
                if (a.expectedOutputTokens() == null) {
                    p.packNil();
                } else {
                    p.packLong(a.expectedOutputTokens());
                }
                p.packString("prefill_load_hint");
                if (a.trackPrefill()) {
                    p.packMapHeader(2)
                            .packString("initial_effective_prefill_tokens")
                            .packLong(a.prefillHint())
                            .packString("expected_prefill_duration")
                            .packNil();
                } else {
                    p.packNil();
                }
            }
            p.packString("router_id");
            BoundedUnpacker.packU64(p, routerId);
            p.packString("lora_name");
            if (e.loraName() == null) {
                p.packNil();
            } else {
                p.packString(e.loraName());
            }
            return p.toByteArray();
        } catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Decodes one payload; throws {@link IllegalArgumentException} for anything that is not a valid event. */
    public static Received decode(byte[] payload) {
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
            Reader r = new Reader(u, payload.length);
            return r.scoped();
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("undecodable replica event: " + e.getMessage(), e);
        }
    }

    private static final class Reader extends BoundedUnpacker {
        Reader(MessageUnpacker u, int size) {
            super(u, size);
        }

        Received scoped() throws IOException {
            String model = null;
            String routingGroup = null;
            Integer blockSize = null;
            Received inner = null;
            int n = mapHeader();
            for (int i = 0; i < n; i++) {
                switch (str()) {
                    case "model_name" -> model = str();
                    case "routing_group" -> routingGroup = str();
                    case "block_size" -> blockSize = (int) u32();
                    case "event" -> inner = event(model, routingGroup, blockSize);
                    default -> skip();
                }
            }
            if (model == null || routingGroup == null || blockSize == null || inner == null) {
                throw new IllegalArgumentException("missing member of ScopedReplicaEvent");
            }
            // The event may come before the scope's members: rebuild it with them.
            return new Received(
                    rescope(inner.event(), new PartitionKey(model, routingGroup), blockSize), inner.routerId());
        }

        private Received event(String model, String routingGroup, Integer blockSize) throws IOException {
            String id = null;
            Long worker = null;
            Integer rank = null;
            Long router = null;
            String lora = null;
            Object data = null;
            int n = mapHeader();
            for (int i = 0; i < n; i++) {
                switch (str()) {
                    case "request_id" -> id = str();
                    case "worker" -> {
                        int m = mapHeader();
                        for (int k = 0; k < m; k++) {
                            switch (str()) {
                                case "worker_id" -> worker = u64();
                                case "dp_rank" -> rank = (int) u32();
                                default -> skip();
                            }
                        }
                    }
                    case "data" -> data = data();
                    case "router_id" -> router = u64();
                    case "lora_name" -> lora = optionalString();
                    default -> skip();
                }
            }
            if (id == null || worker == null || rank == null || router == null || data == null) {
                throw new IllegalArgumentException("missing member of ActiveSequenceEvent");
            }
            PartitionKey p = new PartitionKey(model, routingGroup);
            int b = blockSize == null ? 0 : blockSize;
            LoadEvent e;
            if ("Free".equals(data)) {
                e = new LoadEvent.Freed(p, b, id, worker, rank, lora);
            } else if ("MarkPrefillCompleted".equals(data)) {
                e = new LoadEvent.PrefillCompleted(p, b, id, worker, rank, lora);
            } else if (data instanceof Added a) {
                e = new LoadEvent.Added(p, b, id, worker, rank, lora, a.hashes, a.track, a.expected, a.hint);
            } else {
                throw new IllegalArgumentException("unknown event data " + data);
            }
            return new Received(e, router);
        }

        private record Added(long[] hashes, boolean track, Long expected, long hint) {}

        /** A unit variant's name, or the AddRequest payload. */
        private Object data() throws IOException {
            if (u.getNextFormat().getValueType() == ValueType.STRING) {
                return str();
            }
            int n = mapHeader();
            if (n != 1) {
                throw new IllegalArgumentException("event data is a map of " + n + " entries");
            }
            String variant = str();
            if (!variant.equals("AddRequest")) {
                skip();
                return variant;
            }
            long[] hashes = new long[0];
            boolean track = true;
            Long expected = null;
            long hint = 0;
            int m = mapHeader();
            for (int i = 0; i < m; i++) {
                switch (str()) {
                    case "token_sequence" -> {
                        if (u.tryUnpackNil()) {
                            hashes = new long[0];
                        } else {
                            int len = u.unpackArrayHeader();
                            if (len > size) {
                                throw new IllegalArgumentException("token_sequence declares " + len + " entries");
                            }
                            hashes = new long[len];
                            for (int k = 0; k < len; k++) {
                                hashes[k] = u64();
                            }
                        }
                    }
                    case "track_prefill_tokens" -> track = u.tryUnpackNil() || u.unpackBoolean();
                    case "expected_output_tokens" -> expected = u.tryUnpackNil() ? null : u32();
                    case "prefill_load_hint" -> {
                        if (!u.tryUnpackNil()) {
                            int h = mapHeader();
                            for (int k = 0; k < h; k++) {
                                if (str().equals("initial_effective_prefill_tokens")) {
                                    hint = u64();
                                } else {
                                    skip();
                                }
                            }
                        }
                    }
                    default -> skip();
                }
            }
            return new Added(hashes, track, expected, hint);
        }
    }

    private static LoadEvent rescope(LoadEvent e, PartitionKey p, int b) {
        if (e instanceof LoadEvent.Added a) {
            return new LoadEvent.Added(
                    p,
                    b,
                    a.requestId(),
                    a.workerId(),
                    a.dpRank(),
                    a.loraName(),
                    a.sequenceHashes(),
                    a.trackPrefill(),
                    a.expectedOutputTokens(),
                    a.prefillHint());
        }
        if (e instanceof LoadEvent.PrefillCompleted) {
            return new LoadEvent.PrefillCompleted(p, b, e.requestId(), e.workerId(), e.dpRank(), e.loraName());
        }
        return new LoadEvent.Freed(p, b, e.requestId(), e.workerId(), e.dpRank(), e.loraName());
    }
}
