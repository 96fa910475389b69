package dev.kvindexer.grpc;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ConfigureExpectedWorkersRequest;
import dev.kvindexer.grpc.v1.ReplaceExternalKvSnapshotRequest;
import io.vertx.core.Future;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the bridge's state alike on every member of a cluster: a change accepted here reaches every other member
 * before its caller hears of it, the other members' changes are applied here, and a member that starts copies one
 * serving member's state before it serves, then applies the changes that arrived meanwhile. A change travels as its
 * kind and the request's own protobuf bytes, and is checked and applied here as if a bridge had sent it.
 */
final class ExternalKvReplica {
    private static final Logger LOG = LoggerFactory.getLogger(ExternalKvReplica.class);

    static final byte CONFIGURE = 1;
    static final byte REPLACE = 2;
    static final byte APPLY = 3;

    /** Changes held while the state is copied; past either bound the newest are dropped (and logged). */
    static final int MAX_HELD = 10_000;

    static final long MAX_HELD_BYTES = 64L * 1024 * 1024;

    private final ExternalKvService service;
    private final ExternalKvPeers peers;
    /** Changes that arrived while the state is copied, in order; null once the copy is done. */
    private List<byte[]> held;

    private long heldBytes;
    private long dropped;

    /** Members that did not apply a change sent from here. */
    final LongAdder missed = new LongAdder();
    /** Other members' changes applied here, and refused here. */
    final LongAdder applied = new LongAdder();

    final LongAdder refused = new LongAdder();
    /** Whether this member began from another's state. */
    volatile boolean copied;

    ExternalKvReplica(ExternalKvService service, ExternalKvPeers peers) {
        this.service = service;
        this.peers = peers;
    }

    /**
     * Starts taking the other members' changes, copies one's state (none when no member serves), then applies what
     * arrived meanwhile. A state that cannot be had is logged and the service starts from what it has; one refused
     * part-way is undone, and the service starts empty.
     */
    Future<Void> join() {
        synchronized (this) {
            held = new ArrayList<>();
        }
        return peers.listen(this::receive, this::state)
                .compose(v -> peers.stateOfAny())
                .transform(copied -> peers.aside(() -> {
                    if (copied.succeeded()) {
                        copy(copied.result());
                    } else if (peers != ExternalKvPeers.NONE) {
                        LOG.info(
                                "gRPC service: no bridge state copied from another member: {}",
                                copied.cause().getMessage());
                    }
                    drain();
                }));
    }

    /** Stops taking the other members' changes and questions. */
    Future<Void> stop() {
        return peers.stop();
    }

    private void copy(byte[] state) {
        try {
            int changes = load(state);
            copied = true;
            LOG.info("gRPC service: copied the bridge's state from another member ({} changes)", changes);
        } catch (RuntimeException e) {
            service.configure(ConfigureExpectedWorkersRequest.getDefaultInstance());
            LOG.warn("gRPC service: another member's bridge state was refused, starting empty: {}", e.toString());
        }
    }

    /** Sends a change applied here to every other member. */
    Future<Void> share(byte kind, Message change) {
        if (peers == ExternalKvPeers.NONE) {
            return Future.succeededFuture();
        }
        return peers.toAll(encode(kind, change)).map(n -> {
            missed.add(n);
            return null;
        });
    }

    /**
     * Another member's change: applied now, or held while the state is copied. One that cannot be held is refused,
     * so its sender knows this member lacks it.
     */
    void receive(byte[] change) {
        synchronized (this) {
            if (held != null) {
                if (held.size() >= MAX_HELD || heldBytes + change.length > MAX_HELD_BYTES) {
                    refused.increment();
                    if (dropped++ == 0) {
                        LOG.warn("gRPC service: too many changes arrived while copying the state; later ones refused");
                    }
                    throw new IllegalStateException("too many changes held while this member copies the state");
                }
                held.add(change);
                heldBytes += change.length;
                return;
            }
        }
        counted(change);
    }

    /** Applies another member's change, counted as applied or refused. */
    private void counted(byte[] change) {
        try {
            apply(change);
            applied.increment();
        } catch (RuntimeException e) {
            refused.increment();
            throw e;
        }
    }

    /**
     * This member's state, as changes that make it again on an empty service, of at most {@code maxBytes}. Refused
     * while this member still copies its own: a member that starts asks the next one.
     */
    byte[] state(long maxBytes) {
        synchronized (this) {
            if (held != null) {
                throw new IllegalStateException("this member is still copying the bridge state itself");
            }
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int[] count = {0};
        writeInt(bytes, 0); // the count, set at the end
        service.state(m -> {
            byte[] change = encode(kindOf(m), m);
            if (bytes.size() + 4L + change.length > maxBytes) {
                throw new IllegalStateException(
                        "this member's bridge state is larger than a message between members may be (" + maxBytes
                                + " bytes)");
            }
            writeInt(bytes, change.length);
            bytes.write(change, 0, change.length);
            count[0]++;
        });
        byte[] out = bytes.toByteArray();
        ByteBuffer.wrap(out).putInt(0, count[0]);
        return out;
    }

    private static void writeInt(ByteArrayOutputStream out, int v) {
        out.write(v >>> 24);
        out.write(v >>> 16);
        out.write(v >>> 8);
        out.write(v);
    }

    /** Applies another member's state, once its every length checked against the bytes; the number of changes. */
    int load(byte[] state) {
        List<byte[]> changes = decodeState(state);
        changes.forEach(this::apply);
        return changes.size();
    }

    static List<byte[]> decodeState(byte[] state) {
        ByteBuffer in = ByteBuffer.wrap(state);
        if (in.remaining() < 4) {
            throw new IllegalArgumentException("a state of " + state.length + " bytes");
        }
        int count = in.getInt();
        // each change takes at least its length and its kind
        if (count < 0 || count > in.remaining() / 5) {
            throw new IllegalArgumentException("a state declaring " + count + " changes in " + state.length + " bytes");
        }
        List<byte[]> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int length = in.remaining() < 4 ? -1 : in.getInt();
            if (length < 1 || length > in.remaining()) {
                throw new IllegalArgumentException("change " + i + " of the state declares " + length + " bytes");
            }
            byte[] change = new byte[length];
            in.get(change);
            out.add(change);
        }
        if (in.hasRemaining()) {
            throw new IllegalArgumentException(in.remaining() + " bytes after the state's last change");
        }
        return out;
    }

    /** Applies one change as a bridge's request is applied: checked, then applied or refused whole. */
    void apply(byte[] change) {
        if (change.length < 1) {
            throw new IllegalArgumentException("an empty change");
        }
        ByteBuffer body = ByteBuffer.wrap(change, 1, change.length - 1);
        try {
            switch (change[0]) {
                case CONFIGURE -> service.configure(ConfigureExpectedWorkersRequest.parseFrom(body));
                case REPLACE -> service.replace(ReplaceExternalKvSnapshotRequest.parseFrom(body));
                case APPLY -> service.apply(ApplyExternalKvBatchRequest.parseFrom(body));
                default -> throw new IllegalArgumentException("a change of unknown kind " + change[0]);
            }
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("a malformed change: " + e.getMessage(), e);
        }
    }

    private void drain() {
        while (true) {
            List<byte[]> batch;
            synchronized (this) {
                if (held.isEmpty()) {
                    held = null;
                    heldBytes = 0;
                    return;
                }
                batch = held;
                held = new ArrayList<>();
                heldBytes = 0;
            }
            for (byte[] change : batch) {
                try {
                    counted(change);
                } catch (RuntimeException e) {
                    LOG.warn("gRPC service: a change held while copying the state was refused: {}", e.toString());
                }
            }
        }
    }

    private static byte kindOf(Message m) {
        if (m instanceof ConfigureExpectedWorkersRequest) {
            return CONFIGURE;
        }
        if (m instanceof ReplaceExternalKvSnapshotRequest) {
            return REPLACE;
        }
        if (m instanceof ApplyExternalKvBatchRequest) {
            return APPLY;
        }
        throw new IllegalArgumentException("not a change: " + m.getClass().getSimpleName());
    }

    static byte[] encode(byte kind, Message change) {
        byte[] body = change.toByteArray();
        byte[] out = new byte[body.length + 1];
        out[0] = kind;
        System.arraycopy(body, 0, out, 1, body.length);
        return out;
    }
}
