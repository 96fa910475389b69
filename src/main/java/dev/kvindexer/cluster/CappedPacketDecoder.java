package dev.kvindexer.cluster;

import com.hazelcast.internal.networking.HandlerStatus;
import com.hazelcast.internal.nio.Packet;
import com.hazelcast.internal.server.ServerConnection;
import com.hazelcast.internal.server.tcp.PacketDecoder;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * Hazelcast's member packet decoder, bounded. Hazelcast's own allocates the size a packet header declares before it
 * reads a byte of the packet, with no bound and before any handshake: the protocol bytes and one 11-byte header
 * declaring two gigabytes make a member allocate two gigabytes. Here a packet may declare at most
 * {@link MemberGuard#BEFORE_HANDSHAKE} bytes until the connection has completed its member handshake and
 * {@code limit} after, and its array grows with the bytes that arrive rather than with what was declared. A
 * connection that declares more is closed, counted and logged ({@link MemberGuard}).
 */
final class CappedPacketDecoder extends PacketDecoder {
    /** Version (1 byte), flags (2), partition id (4), payload size (4), as Hazelcast's PacketIOHelper reads them. */
    static final int HEADER_BYTES = 11;
    /** What the payload array starts at: a large packet costs a few copies, a lie about its size costs nothing. */
    private static final int FIRST_ALLOCATION = 64 * 1024;

    private final MemberGuard guard;
    private boolean headerRead;
    private char flags;
    private int partitionId;
    private int size;
    private int offset;
    private byte[] payload;
    private boolean refused;
    private boolean handshaken;

    CappedPacketDecoder(ServerConnection connection, Consumer<Packet> dispatcher, MemberGuard guard) {
        super(connection, dispatcher);
        this.guard = guard;
    }

    @Override
    public void handlerAdded() {
        super.handlerAdded();
        guard.decoderAdded();
    }

    @Override
    public HandlerStatus onRead() {
        ((Buffer) src).flip();
        try {
            while (!refused && src.hasRemaining()) {
                Packet packet = read(src);
                if (packet == null) {
                    break;
                }
                onPacketComplete(packet);
                if (!handshaken && connection.getRemoteUuid() != null) {
                    handshaken = true;
                    guard.handshakeDone(channel);
                }
            }
            return HandlerStatus.CLEAN;
        } finally {
            if (refused || !src.hasRemaining()) {
                ((Buffer) src).clear();
            } else {
                src.compact();
            }
        }
    }

    private Packet read(ByteBuffer in) {
        if (!headerRead) {
            if (in.remaining() < HEADER_BYTES) {
                return null;
            }
            byte version = in.get();
            flags = in.getChar();
            partitionId = in.getInt();
            size = in.getInt();
            if (version != Packet.VERSION) {
                refuse(MemberGuard.INVALID, "packet version " + version + ", expected " + Packet.VERSION);
                return null;
            }
            int limit = guard.limitFor(connection);
            if (size < 0 || size > limit) {
                refuse(
                        MemberGuard.PACKET_SIZE,
                        "a packet declaring " + size + " bytes (limit " + limit
                                + (connection.getRemoteUuid() == null ? " before the member handshake)" : ")"));
                return null;
            }
            headerRead = true;
            offset = 0;
            payload = new byte[Math.min(size, FIRST_ALLOCATION)];
        }
        int n = Math.min(in.remaining(), size - offset);
        if (offset + n > payload.length) {
            payload = Arrays.copyOf(payload, (int) Math.min(size, Math.max(2L * payload.length, offset + n)));
        }
        in.get(payload, offset, n);
        offset += n;
        if (offset < size) {
            return null;
        }
        headerRead = false;
        Packet packet = new Packet(payload, partitionId).resetFlagsTo(flags);
        payload = null;
        return packet;
    }

    private void refuse(String reason, String what) {
        refused = true;
        payload = null;
        guard.refuse(connection, channel, reason, what);
    }
}
