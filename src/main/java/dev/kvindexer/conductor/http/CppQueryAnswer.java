package dev.kvindexer.conductor.http;

import dev.kvindexer.conductor.CppConductorState;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The C++ Conductor query's answer as msgpack bytes (docs/protocol/index.md#conductor-context-index), written by hand:
 * the same bytes msgpack-java's packer writes (the shortest head for every map, str and uint), without a packer and
 * its buffers for every query. The fixed keys are written ahead once, heads included; room for an instance is made
 * once, before its members, so each member is a copy or a few stores.
 */
final class CppQueryAnswer {
    private static final byte[] INSTANCES = str("instances");
    /** An instance's map of six, and its first key. */
    private static final byte[] SIX_LONGEST_MATCHED = concat(new byte[] {(byte) 0x86}, str("longest_matched"));

    private static final byte[] DP = str("dp");
    private static final byte[] RANK_MATCHES = str("rank_matches");
    /** A rank's map of three, and its first key. */
    private static final byte[] THREE_GPU = concat(new byte[] {(byte) 0x83}, str("gpu"));

    private static final byte[] GPU = str("gpu");
    private static final byte[] CPU = str("cpu");
    private static final byte[] DISK = str("disk");
    /** The most bytes a str head, a map head or an integer takes. */
    private static final int HEAD = 9;
    /**
     * The most bytes of an instance's members but its name and ranks: its map head, six keys, four integers, two map
     * heads.
     */
    private static final int INSTANCE_FIXED = 96;
    /** The most bytes of one rank's members but its name twice: four integers, a map head, three keys. */
    private static final int RANK_FIXED = 64;

    private CppQueryAnswer() {}

    /** Per instance its six members in order, ranks in numeric order, in tokens. */
    static Buffer of(CppConductorState.Matches m, long blockSize) {
        CppConductorState.Layout layout = m.layout();
        int[] reach = m.reach();
        int base = layout.firstEntry(m.from());
        byte[] out = new byte[512];
        int at = copy(out, mapHeader(out, 0, 1), INSTANCES);
        at = mapHeader(out, at, m.to() - m.from());
        for (int i = m.from(); i < m.to(); i++) {
            int first = layout.firstEntry(i);
            int end = layout.firstEntry(i + 1);
            byte[] name = layout.instanceUtf8(i);
            int room = HEAD + name.length + INSTANCE_FIXED;
            long gpu = 0;
            long cpu = 0;
            long disk = 0;
            for (int e = first; e < end; e++) {
                int r = 3 * (e - base);
                gpu = Math.max(gpu, reach[r] * blockSize);
                cpu = Math.max(cpu, reach[r + 1] * blockSize);
                disk = Math.max(disk, reach[r + 2] * blockSize);
                room += 2 * (HEAD + layout.rankUtf8(e).length) + RANK_FIXED;
            }
            if (at + room > out.length) {
                out = Arrays.copyOf(out, Math.max(2 * out.length, at + room));
            }
            at = copy(out, str(out, at, name), SIX_LONGEST_MATCHED);
            at = integer(out, at, disk);
            at = mapHeader(out, copy(out, at, DP), end - first);
            for (int e = first; e < end; e++) {
                at = integer(out, str(out, at, layout.rankUtf8(e)), reach[3 * (e - base)] * blockSize);
            }
            at = mapHeader(out, copy(out, at, RANK_MATCHES), end - first);
            for (int e = first; e < end; e++) {
                int r = 3 * (e - base);
                at = copy(out, str(out, at, layout.rankUtf8(e)), THREE_GPU);
                at = integer(out, at, reach[r] * blockSize);
                at = integer(out, copy(out, at, CPU), reach[r + 1] * blockSize);
                at = integer(out, copy(out, at, DISK), reach[r + 2] * blockSize);
            }
            at = integer(out, copy(out, at, GPU), gpu);
            at = integer(out, copy(out, at, CPU), cpu);
            at = integer(out, copy(out, at, DISK), disk);
        }
        return BufferInternal.buffer(Unpooled.wrappedBuffer(out, 0, at));
    }

    private static int mapHeader(byte[] out, int at, int size) {
        if (size < 16) {
            out[at] = (byte) (0x80 | size);
            return at + 1;
        }
        if (size < 0x1_0000) {
            out[at] = (byte) 0xde;
            return put2(out, at + 1, size);
        }
        out[at] = (byte) 0xdf;
        return put4(out, at + 1, size);
    }

    /** A str: its head, then its UTF-8 bytes. */
    private static int str(byte[] out, int at, byte[] utf8) {
        int n = utf8.length;
        if (n < 32) {
            out[at++] = (byte) (0xa0 | n);
        } else if (n < 0x100) {
            out[at] = (byte) 0xd9;
            out[at + 1] = (byte) n;
            at += 2;
        } else if (n < 0x1_0000) {
            out[at] = (byte) 0xda;
            at = put2(out, at + 1, n);
        } else {
            out[at] = (byte) 0xdb;
            at = put4(out, at + 1, n);
        }
        return copy(out, at, utf8);
    }

    private static int copy(byte[] out, int at, byte[] bytes) {
        System.arraycopy(bytes, 0, out, at, bytes.length);
        return at + bytes.length;
    }

    /** An integer in the shortest form, as the packer's {@code packLong} (a product that overflowed included). */
    private static int integer(byte[] out, int at, long v) {
        if (v < -32) {
            if (v < -(1L << 15)) {
                if (v < -(1L << 31)) {
                    out[at] = (byte) 0xd3;
                    return put4(out, put4(out, at + 1, (int) (v >>> 32)), (int) v);
                }
                out[at] = (byte) 0xd2;
                return put4(out, at + 1, (int) v);
            }
            if (v < -128) {
                out[at] = (byte) 0xd1;
                return put2(out, at + 1, (int) v);
            }
            out[at] = (byte) 0xd0;
            out[at + 1] = (byte) v;
            return at + 2;
        }
        if (v < 0x80) {
            // a fixint, negative from -32 or positive
            out[at] = (byte) v;
            return at + 1;
        }
        if (v < 0x100) {
            out[at] = (byte) 0xcc;
            out[at + 1] = (byte) v;
            return at + 2;
        }
        if (v < 0x1_0000) {
            out[at] = (byte) 0xcd;
            return put2(out, at + 1, (int) v);
        }
        if (v < 0x1_0000_0000L) {
            out[at] = (byte) 0xce;
            return put4(out, at + 1, (int) v);
        }
        out[at] = (byte) 0xcf;
        return put4(out, put4(out, at + 1, (int) (v >>> 32)), (int) v);
    }

    private static int put2(byte[] out, int at, int v) {
        out[at] = (byte) (v >>> 8);
        out[at + 1] = (byte) v;
        return at + 2;
    }

    private static int put4(byte[] out, int at, int v) {
        out[at] = (byte) (v >>> 24);
        out[at + 1] = (byte) (v >>> 16);
        out[at + 2] = (byte) (v >>> 8);
        out[at + 3] = (byte) v;
        return at + 4;
    }

    private static byte[] str(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[HEAD + utf8.length];
        return Arrays.copyOf(out, str(out, 0, utf8));
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
