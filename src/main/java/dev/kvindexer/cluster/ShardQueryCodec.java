package dev.kvindexer.cluster;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.TieredMatch;
import dev.kvindexer.partition.PromptHashes;
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

    private ShardQueryCodec() {}

    /** Query kinds: by local hashes, by Mooncake sequence hashes, or tier by tier (Dynamo's remote indexer). */
    static final int LOCAL = 0;

    static final int SEQUENCE = 1;
    static final int TIERED = 2;
    /**
     * Not a query: which of the instances asked the holder serves with their history (see
     * {@code Registry#servesWithHistory}); answered as a {@link Reply} with those in {@code served} and nothing else.
     */
    static final int HISTORY = 3;
    /** By an engine's own block hashes (SGLang's router over gRPC). */
    static final int ENGINE = 4;

    /** The query kind that asks by {@code hashes}. */
    static int kindOf(PromptHashes hashes) {
        return switch (hashes) {
            case LOCAL -> LOCAL;
            case SEQUENCE -> SEQUENCE;
            case ENGINE -> ENGINE;
        };
    }

    /** What the hashes of a query of {@code kind} name (a tiered or history question asks by local hashes). */
    static PromptHashes hashesOf(int kind) {
        return switch (kind) {
            case SEQUENCE -> PromptHashes.SEQUENCE;
            case ENGINE -> PromptHashes.ENGINE;
            default -> PromptHashes.LOCAL;
        };
    }

    /** What a querying node asks of one holder: the prompt's hashes and the instances it wants answered. */
    record Request(PartitionKey key, int kind, long[] hashes, long[] workers) {}

    /**
     * A holder's answer: the instances among those asked that it holds since registration ({@code served}), their
     * owners' matches, and its Mooncake Stores' reach.
     */
    record Reply(int blockSize, long[] served, List<OwnerMatch> owners, int[] sharedReach) {}

    static Buffer encode(Request r) {
        byte[] model = r.key().modelName().getBytes(StandardCharsets.UTF_8);
        byte[] routingGroup = r.key().routingGroup().getBytes(StandardCharsets.UTF_8);
        Buffer b = Buffer.buffer(
                2 + 8 + model.length + routingGroup.length + 8 + 8 * (r.hashes().length + r.workers().length));
        b.appendByte(VERSION).appendByte((byte) r.kind());
        b.appendInt(model.length)
                .appendBytes(model)
                .appendInt(routingGroup.length)
                .appendBytes(routingGroup);
        appendLongs(b, r.hashes());
        appendLongs(b, r.workers());
        return b;
    }

    static Request decodeRequest(Buffer b) {
        Reader in = new Reader(b);
        in.version();
        int kind = in.u8();
        if (kind > ENGINE) {
            throw new IllegalArgumentException("unknown query kind " + kind);
        }
        PartitionKey key = new PartitionKey(in.string(), in.string());
        long[] hashes = in.longs();
        long[] workers = in.longs();
        in.end();
        return new Request(key, kind, hashes, workers);
    }

    static Buffer encode(Reply r) {
        Buffer b = Buffer.buffer(
                1 + 4 + 4 + 8 * r.served().length + 4 + OWNER_BYTES * r.owners().size() + 8);
        b.appendByte(VERSION).appendInt(r.blockSize());
        appendLongs(b, r.served());
        b.appendInt(r.owners().size());
        for (OwnerMatch m : r.owners()) {
            b.appendLong(m.workerId())
                    .appendInt(m.dpRank())
                    .appendInt(m.gpuBlocks())
                    .appendInt(m.cpuBlocks())
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

    /** A holder's tier-by-tier answer for the instances among those asked that it serves. */
    record TieredReply(int blockSize, long[] served, TieredMatch match) {}

    static Buffer encode(TieredReply r) {
        Buffer b = Buffer.buffer(64).appendByte(VERSION).appendInt(r.blockSize());
        appendLongs(b, r.served());
        appendOwners(b, r.match().device());
        b.appendInt(r.match().lowerTiers().size());
        for (TieredMatch.Tier t : r.match().lowerTiers()) {
            b.appendByte((byte) t.tier().ordinal());
            appendOwners(b, t.hits());
        }
        return b;
    }

    static TieredReply decodeTieredReply(Buffer b) {
        Reader in = new Reader(b);
        in.version();
        int blockSize = in.i32();
        long[] served = in.longs();
        TieredMatch.Owners device = in.owners();
        int n = in.count(1 + 4);
        List<TieredMatch.Tier> tiers = new ArrayList<>(n);
        StorageTier[] all = StorageTier.values();
        for (int i = 0; i < n; i++) {
            int tier = in.u8();
            if (tier == 0 || tier >= all.length) {
                throw new IllegalArgumentException("not a lower tier: " + tier);
            }
            tiers.add(new TieredMatch.Tier(all[tier], in.owners()));
        }
        in.end();
        return new TieredReply(blockSize, served, new TieredMatch(device, tiers));
    }

    private static void appendOwners(Buffer b, TieredMatch.Owners o) {
        b.appendInt(o.size());
        for (int i = 0; i < o.size(); i++) {
            b.appendLong(o.workers()[i]).appendInt(o.ranks()[i]).appendInt(o.blocks()[i]);
        }
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

        TieredMatch.Owners owners() {
            int n = count(16);
            long[] workers = new long[n];
            int[] ranks = new int[n];
            int[] blocks = new int[n];
            for (int i = 0; i < n; i++) {
                workers[i] = i64();
                ranks[i] = i32();
                blocks[i] = i32();
            }
            return new TieredMatch.Owners(workers, ranks, blocks);
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
