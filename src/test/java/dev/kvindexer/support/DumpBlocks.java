package dev.kvindexer.support;

import dev.kvindexer.dump.PartitionDumpJson;
import dev.kvindexer.partition.PartitionSnapshot;
import dev.kvindexer.sim.HeldBlock;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Turns a {@code GET /dump} body into the canonical form engines report their truth in ({@link HeldBlock}), so a
 * test can compare an indexer with its engines as sets. Hashes in the dump are unsigned: Vert.x parses those above
 * {@code Long.MAX_VALUE} as {@link BigInteger}, whose {@code longValue()} is the same 64-bit pattern.
 */
public final class DumpBlocks {
    private DumpBlocks() {}

    /** A partition's /dump value rendered from its snapshot, as the route writes it. */
    public static String json(int blockSize, PartitionSnapshot snapshot) throws java.io.IOException {
        PartitionDumpJson renderer = new PartitionDumpJson(blockSize, snapshot.payload(), snapshot.missingInstances());
        StringBuilder out = new StringBuilder();
        for (String piece; (piece = renderer.next(1 << 16)) != null; ) {
            out.append(piece);
        }
        return out.toString();
    }

    /** Every block in partition {@code dumpKey} ({@code model:tenant}); empty when the partition is absent. */
    public static Set<HeldBlock> parse(String dumpJson, String dumpKey) {
        JsonObject partition = new JsonObject(dumpJson).getJsonObject(dumpKey);
        Set<HeldBlock> out = new HashSet<>();
        if (partition == null) {
            return out;
        }
        JsonArray events = partition.getJsonArray("events");
        for (int i = 0; i < events.size(); i++) {
            JsonObject e = events.getJsonObject(i);
            JsonObject event = e.getJsonObject("event");
            JsonObject stored = event.getJsonObject("data").getJsonObject("stored");
            if (stored == null) {
                throw new AssertionError("a dump holds only stored events: " + e);
            }
            Object parent = stored.getValue("parent_hash");
            JsonArray blocks = stored.getJsonArray("blocks");
            for (int b = 0; b < blocks.size(); b++) {
                JsonObject block = blocks.getJsonObject(b);
                long hash = u64(block.getValue("block_hash"));
                out.add(new HeldBlock(
                        u64(e.getValue("worker_id")),
                        event.getInteger("dp_rank"),
                        e.getString("storage_tier"),
                        hash,
                        parent == null ? null : u64(parent),
                        u64(block.getValue("tokens_hash"))));
                parent = hash;
            }
        }
        return out;
    }

    /** A JSON number holding an unsigned 64-bit value, as its bit pattern. */
    public static long u64(Object value) {
        if (value instanceof BigInteger big) {
            if (big.signum() < 0 || big.bitLength() > 64) {
                throw new AssertionError("not a u64: " + big);
            }
            return big.longValue();
        }
        if (value instanceof Number n) {
            long v = n.longValue();
            if (v < 0) {
                throw new AssertionError("negative hash in the dump: " + v);
            }
            return v;
        }
        throw new AssertionError("not a number: " + value);
    }

    /** A readable difference between two block sets (sizes and the first few blocks on either side). */
    public static String diff(Set<HeldBlock> expected, Set<HeldBlock> actual) {
        Set<HeldBlock> missing = new HashSet<>(expected);
        missing.removeAll(actual);
        Set<HeldBlock> extra = new HashSet<>(actual);
        extra.removeAll(expected);
        return "expected " + expected.size() + " blocks, dump has " + actual.size() + "; missing " + missing.size()
                + " " + sample(missing) + "; unexpected " + extra.size() + " " + sample(extra);
    }

    private static String sample(Set<HeldBlock> blocks) {
        Comparator<HeldBlock> order = Comparator.comparingLong(HeldBlock::worker)
                .thenComparing(HeldBlock::tier)
                .thenComparing(HeldBlock::blockHash, Long::compareUnsigned);
        TreeSet<HeldBlock> sorted = new TreeSet<>(order);
        sorted.addAll(blocks);
        return sorted.stream().limit(5).map(HeldBlock::toString).collect(Collectors.joining(", ", "[", "]"));
    }
}
