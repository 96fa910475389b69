package dev.kvindexer.conductor.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.kvindexer.conductor.CppConductorState;
import java.io.IOException;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** The hand-written query answer is byte for byte what msgpack-java's packer writes for the same members. */
class CppQueryAnswerTest {
    @Test
    void everyHeadLengthAsThePackerWritesIt() throws IOException {
        SplittableRandom rnd = new SplittableRandom(11);
        String[] names = {
            "",
            "a",
            "x".repeat(31),
            "y".repeat(32),
            "z".repeat(255),
            "w".repeat(256),
            "é".repeat(40000),
            "实例-1",
            "10.0.0.1:8000"
        };
        long[] blockSizes = {1, 16, 512, 1L << 20, 1L << 33, 1L << 62, 3L << 61};
        int[] counts = {0, 1, 23, 24, 31, 32, 33, 127, 128, 255, 256, 65_535, 65_536, Integer.MAX_VALUE};
        for (int round = 0; round < 300; round++) {
            Map<String, Map<Integer, int[]>> instances = new TreeMap<>();
            int n = round == 0 ? 0 : rnd.nextInt(round % 7 == 0 ? 20 : 4);
            for (int i = 0; i < n; i++) {
                Map<Integer, int[]> ranks = new TreeMap<>();
                int r = round % 5 == 0 ? 17 : 1 + rnd.nextInt(3);
                for (int k = 0; k < r; k++) {
                    ranks.put(
                            rnd.nextInt(100_000), new int[] {pick(rnd, counts), pick(rnd, counts), pick(rnd, counts)});
                }
                instances.put(names[rnd.nextInt(names.length)] + i, ranks);
            }
            long blockSize = blockSizes[rnd.nextInt(blockSizes.length)];
            CppConductorState.Matches m = CppConductorState.Matches.of(instances);
            assertArrayEquals(
                    packed(m, blockSize), CppQueryAnswer.of(m, blockSize).getBytes(), "round " + round);
        }
    }

    private static int pick(SplittableRandom rnd, int[] counts) {
        return counts[rnd.nextInt(counts.length)];
    }

    /** The answer through msgpack-java's packer, member by member. */
    private static byte[] packed(CppConductorState.Matches m, long blockSize) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(1);
            p.packString("instances").packMapHeader(m.instances().size());
            for (Map.Entry<String, Map<Integer, int[]>> instance : m.instances().entrySet()) {
                Map<Integer, int[]> ranks = instance.getValue();
                long gpu = 0;
                long cpu = 0;
                long disk = 0;
                for (int[] r : ranks.values()) {
                    gpu = Math.max(gpu, r[0] * blockSize);
                    cpu = Math.max(cpu, r[1] * blockSize);
                    disk = Math.max(disk, r[2] * blockSize);
                }
                p.packString(instance.getKey()).packMapHeader(6);
                p.packString("longest_matched").packLong(disk);
                p.packString("dp").packMapHeader(ranks.size());
                for (Map.Entry<Integer, int[]> r : ranks.entrySet()) {
                    p.packString(Integer.toString(r.getKey())).packLong(r.getValue()[0] * blockSize);
                }
                p.packString("rank_matches").packMapHeader(ranks.size());
                for (Map.Entry<Integer, int[]> r : ranks.entrySet()) {
                    p.packString(Integer.toString(r.getKey())).packMapHeader(3);
                    p.packString("gpu").packLong(r.getValue()[0] * blockSize);
                    p.packString("cpu").packLong(r.getValue()[1] * blockSize);
                    p.packString("disk").packLong(r.getValue()[2] * blockSize);
                }
                p.packString("gpu").packLong(gpu);
                p.packString("cpu").packLong(cpu);
                p.packString("disk").packLong(disk);
            }
            return p.toByteArray();
        }
    }
}
