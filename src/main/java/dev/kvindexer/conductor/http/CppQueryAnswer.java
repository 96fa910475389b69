package dev.kvindexer.conductor.http;

import dev.kvindexer.conductor.CppConductorState;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The C++ Conductor query's answer as msgpack bytes (docs/protocol/index.md#conductor-context-index), written by hand:
 * the same bytes msgpack-java's packer writes (the shortest head for every map, str and uint), without a packer and
 * its buffers for every query.
 */
final class CppQueryAnswer {
    private static final byte[] INSTANCES = utf8("instances");
    private static final byte[] LONGEST_MATCHED = utf8("longest_matched");
    private static final byte[] DP = utf8("dp");
    private static final byte[] RANK_MATCHES = utf8("rank_matches");
    private static final byte[] GPU = utf8("gpu");
    private static final byte[] CPU = utf8("cpu");
    private static final byte[] DISK = utf8("disk");

    private byte[] out = new byte[256];
    private int at;

    private CppQueryAnswer() {}

    /** Per instance its six members in order, ranks in numeric order, in tokens. */
    static byte[] of(CppConductorState.Matches m, long blockSize) {
        CppConductorState.Layout layout = m.layout();
        int[] reach = m.reach();
        int base = layout.firstEntry(m.from());
        CppQueryAnswer w = new CppQueryAnswer();
        w.mapHeader(1);
        w.str(INSTANCES).mapHeader(m.to() - m.from());
        for (int i = m.from(); i < m.to(); i++) {
            int first = layout.firstEntry(i);
            int end = layout.firstEntry(i + 1);
            long gpu = 0;
            long cpu = 0;
            long disk = 0;
            for (int e = first; e < end; e++) {
                int r = 3 * (e - base);
                gpu = Math.max(gpu, reach[r] * blockSize);
                cpu = Math.max(cpu, reach[r + 1] * blockSize);
                disk = Math.max(disk, reach[r + 2] * blockSize);
            }
            w.str(layout.instanceUtf8(i)).mapHeader(6);
            w.str(LONGEST_MATCHED).integer(disk);
            w.str(DP).mapHeader(end - first);
            for (int e = first; e < end; e++) {
                w.str(layout.rankUtf8(e)).integer(reach[3 * (e - base)] * blockSize);
            }
            w.str(RANK_MATCHES).mapHeader(end - first);
            for (int e = first; e < end; e++) {
                int r = 3 * (e - base);
                w.str(layout.rankUtf8(e)).mapHeader(3);
                w.str(GPU).integer(reach[r] * blockSize);
                w.str(CPU).integer(reach[r + 1] * blockSize);
                w.str(DISK).integer(reach[r + 2] * blockSize);
            }
            w.str(GPU).integer(gpu);
            w.str(CPU).integer(cpu);
            w.str(DISK).integer(disk);
        }
        return Arrays.copyOf(w.out, w.at);
    }

    private CppQueryAnswer mapHeader(int size) {
        if (size < 16) {
            return put1(0x80 | size);
        }
        return size < 0x1_0000 ? put1(0xde).put2(size) : put1(0xdf).put4(size);
    }

    private CppQueryAnswer str(byte[] utf8) {
        int n = utf8.length;
        if (n < 32) {
            put1(0xa0 | n);
        } else if (n < 0x100) {
            put1(0xd9).put1(n);
        } else if (n < 0x1_0000) {
            put1(0xda).put2(n);
        } else {
            put1(0xdb).put4(n);
        }
        ensure(n);
        System.arraycopy(utf8, 0, out, at, n);
        at += n;
        return this;
    }

    /** An integer in the shortest form, as the packer's {@code packLong} (a product that overflowed included). */
    private CppQueryAnswer integer(long v) {
        if (v < -32) {
            if (v < -(1L << 15)) {
                return v < -(1L << 31)
                        ? put1(0xd3).put4((int) (v >>> 32)).put4((int) v)
                        : put1(0xd2).put4((int) v);
            }
            return v < -128 ? put1(0xd1).put2((int) v) : put1(0xd0).put1((int) v);
        }
        if (v < 0x80) {
            return put1((int) v);
        }
        if (v < 0x100) {
            return put1(0xcc).put1((int) v);
        }
        if (v < 0x1_0000) {
            return put1(0xcd).put2((int) v);
        }
        if (v < 0x1_0000_0000L) {
            return put1(0xce).put4((int) v);
        }
        return put1(0xcf).put4((int) (v >>> 32)).put4((int) v);
    }

    private CppQueryAnswer put1(int b) {
        ensure(1);
        out[at++] = (byte) b;
        return this;
    }

    private CppQueryAnswer put2(int v) {
        return put1(v >>> 8).put1(v);
    }

    private CppQueryAnswer put4(int v) {
        return put2(v >>> 16).put2(v);
    }

    private void ensure(int n) {
        if (at + n > out.length) {
            out = Arrays.copyOf(out, Math.max(2 * out.length, at + n));
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
