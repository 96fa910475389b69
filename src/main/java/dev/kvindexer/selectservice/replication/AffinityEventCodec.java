package dev.kvindexer.selectservice.replication;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.select.AffinityTarget;
import dev.kvindexer.select.SessionBindings;
import java.io.IOException;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;

/**
 * Dynamo's replicated session binding (docs/api/selection.md#session-affinity): an {@code AffinityBindingEvent} as
 * rmp-serde writes it, on topic {@code dynamo.session-affinity.v1} of the replica mesh. Its partition is flattened, so
 * it is one map of seven members in declaration order: {@code model_name}, {@code routing_group}, {@code session_id},
 * {@code worker_id}, {@code dp_rank} (nil for a worker-only binding), {@code sequence}, {@code writer_id}. Decoding
 * reads members by name, skips unknown ones and takes any integer width, as for the load events.
 */
public final class AffinityEventCodec {
    public static final String TOPIC = "dynamo.session-affinity.v1";

    private AffinityEventCodec() {}

    public static byte[] encode(SessionBindings.Binding b) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(7);
            p.packString("model_name").packString(b.partition().modelName());
            p.packString("routing_group").packString(b.partition().routingGroup());
            p.packString("session_id").packString(b.sessionId());
            p.packString("worker_id");
            BoundedUnpacker.packU64(p, b.target().workerId());
            p.packString("dp_rank");
            if (b.target().dpRank() == null) {
                p.packNil();
            } else {
                p.packLong(b.target().dpRank());
            }
            p.packString("sequence");
            BoundedUnpacker.packU64(p, b.version().sequence());
            p.packString("writer_id");
            BoundedUnpacker.packU64(p, b.version().writerId());
            return p.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Decodes one payload; throws {@link IllegalArgumentException} for anything that is not a binding. */
    public static SessionBindings.Binding decode(byte[] payload) {
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
            return new Reader(u, payload.length).binding();
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("undecodable session binding: " + e.getMessage(), e);
        }
    }

    private static final class Reader extends BoundedUnpacker {
        Reader(MessageUnpacker u, int size) {
            super(u, size);
        }

        SessionBindings.Binding binding() throws IOException {
            String model = null;
            String routingGroup = null;
            String session = null;
            Long worker = null;
            Integer rank = null;
            Long sequence = null;
            Long writer = null;
            int n = mapHeader();
            for (int i = 0; i < n; i++) {
                switch (str()) {
                    case "model_name" -> model = str();
                    case "routing_group" -> routingGroup = str();
                    case "session_id" -> session = str();
                    case "worker_id" -> worker = u64();
                    case "dp_rank" -> rank = u.tryUnpackNil() ? null : rank();
                    case "sequence" -> sequence = u64();
                    case "writer_id" -> writer = u64();
                    default -> skip();
                }
            }
            if (model == null
                    || routingGroup == null
                    || session == null
                    || worker == null
                    || sequence == null
                    || writer == null) {
                throw new IllegalArgumentException("missing member of AffinityBindingEvent");
            }
            return new SessionBindings.Binding(
                    new PartitionKey(model, routingGroup),
                    session,
                    new AffinityTarget(worker, rank),
                    new SessionBindings.Version(sequence, writer));
        }

        /** A rank: a u32 that no catalog worker can have past the int range is refused here. */
        private int rank() throws IOException {
            long v = u32();
            if (v > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("dp_rank " + v + " is out of range");
            }
            return (int) v;
        }
    }
}
