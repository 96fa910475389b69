package dev.kvindexer.cluster;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.index.OwnerMatch;
import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The binary form of a scattered query between nodes and of its answer. Another member's bytes are untrusted: every
 * count is checked against the bytes that remain before anything is allocated, and a malformed message is an
 * {@link IllegalArgumentException}, never a partial result.
 */
final class ShardQueryCodec {
    private static final byte VERSION = 1;
    /** Model names and routing groups are short; a longer string is a malformed message. */
    private static final int MAX_STRING_BYTES = 4096;
    private static final int OWNER_BYTES = 8 + 4 * 4;

    private ShardQueryCodec() {
    }

    /** What a querying node asks of one holder: the prompt's hashes and the instances it wants answered. */
    record Request(PartitionKey key, boolean sequenceHashes, long[] hashes, long[] workers) {
    }

    /**
     * A holder's answer: the instances among those asked that it holds since registration ({@code served}), their
     * owners' matches, and its Mooncake Stores' reach.
     */
    record Reply(int blockSize, long[] served, List<OwnerMatch> owners, int[] sharedReach) {
    }

    static Buffer encode(Request r) {
        byte[] model = r.key().modelName().getBytes(StandardCharsets.UTF_8);
        byte[] group = r.key().tenantId().getBytes(StandardCharsets.UTF_8);
        Buffer b = Buffer.buffer(2 + 8 + model.length + group.length + 8 + 8 * (r.hashes().length + r.workers().length));
        b.appendByte(VERSION).appendByte((byte) (r.sequenceHashes() ? 1 : 0));
        b.appendInt(model.length).appendBytes(model).appendInt(group.length).appendBytes(group);
        appendLongs(b, r.hashes());
        appendLongs(b, r.workers());
        return b;
    }

    static Request decodeRequest(Buffer b) {
        Reader in = new Reader(b);
        in.version();
        boolean sequence = switch (in.u8()) {
            case 0 -> false;
            case 1 -> true;
            default -> throw new IllegalArgumentException("unknown query kind");
        };
        PartitionKey key = new PartitionKey(in.string(), in.string());
        long[] hashes = in.longs();
        long[] workers = in.longs();
        in.end();
        return new Request(key, sequence, hashes, workers);
    }

    static Buffer encode(Reply r) {
        Buffer b = Buffer.buffer(1 + 4 + 4 + 8 * r.served().length + 4 + OWNER_BYTES * r.owners().size() + 8);
        b.appendByte(VERSION).appendInt(r.blockSize());
        appendLongs(b, r.served());
        b.appendInt(r.owners().size());
        for (OwnerMatch m : r.owners()) {
            b.appendLong(m.workerId()).appendInt(m.dpRank()).appendInt(m.gpuBlocks()).appendInt(m.cpuBlocks())
                    .appendInt(m.diskBlocks());
        }
        b.appendInt(r.sharedReach()[0]).appendInt(r.sharedReach()[1]);
        return b;
    }

    static Reply decodeReply(Buffer b) {
        Reader in = new Reader(b);
        in.version();
        int blockSize = in.i32();
        long[] served = in.longs();
        int n = in.count(OWNER_BYTES);
        List<OwnerMatch> owners = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            owners.add(new OwnerMatch(in.i64(), in.i32(), in.i32(), in.i32(), in.i32()));
        }
        int[] reach = {in.i32(), in.i32()};
        in.end();
        return new Reply(blockSize, served, owners, reach);
    }

    private static void appendLongs(Buffer b, long[] values) {
        b.appendInt(values.length);
        for (long v : values) {
            b.appendLong(v);
        }
    }

    /** Bounds-checked reads over another member's bytes. */
    private static final class Reader {
        private final Buffer b;
        private int at;

        Reader(Buffer b) {
            this.b = b;
        }

        void version() {
            int v = u8();
            if (v != VERSION) {
                throw new IllegalArgumentException("unknown shard query version " + v);
            }
        }

        int u8() {
            need(1);
            return b.getUnsignedByte(at++);
        }

        int i32() {
            need(4);
            int v = b.getInt(at);
            at += 4;
            return v;
        }

        long i64() {
            need(8);
            long v = b.getLong(at);
            at += 8;
            return v;
        }

        /** A count of items of {@code itemBytes} each that must fit in what remains. */
        int count(int itemBytes) {
            int n = i32();
            if (n < 0 || (long) n * itemBytes > b.length() - at) {
                throw new IllegalArgumentException("count " + n + " exceeds the message");
            }
            return n;
        }

        long[] longs() {
            long[] out = new long[count(8)];
            for (int i = 0; i < out.length; i++) {
                out[i] = i64();
            }
            return out;
        }

        String string() {
            int n = count(1);
            if (n > MAX_STRING_BYTES) {
                throw new IllegalArgumentException("string of " + n + " bytes");
            }
            String s = b.getString(at, at + n, StandardCharsets.UTF_8.name());
            at += n;
            return s;
        }

        void end() {
            if (at != b.length()) {
                throw new IllegalArgumentException((b.length() - at) + " bytes after the message");
            }
        }

        private void need(int n) {
            if (b.length() - at < n) {
                throw new IllegalArgumentException("message ends early");
            }
        }
    }
}
