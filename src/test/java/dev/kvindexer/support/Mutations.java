package dev.kvindexer.support;

import java.util.Arrays;
import java.util.SplittableRandom;

/** Seeded random damage to wire bytes, for the fuzz tests of every decoder and listener. */
public final class Mutations {
    private Mutations() {}

    /** One to four random edits of {@code seed}: truncation, byte changes, msgpack format headers, cut or repeated runs. */
    public static byte[] mutate(byte[] seed, SplittableRandom rnd) {
        byte[] b = seed.clone();
        int edits = 1 + rnd.nextInt(4);
        for (int e = 0; e < edits && b.length > 0; e++) {
            switch (rnd.nextInt(6)) {
                case 0 -> b = Arrays.copyOf(b, rnd.nextInt(b.length)); // truncate
                case 1 -> b[rnd.nextInt(b.length)] = (byte) rnd.nextInt(256); // random byte
                case 2 -> { // interesting byte (format headers)
                    byte[] interesting = {
                        (byte) 0xc0,
                        (byte) 0xc1,
                        (byte) 0xc4,
                        (byte) 0xcf,
                        (byte) 0xd3,
                        (byte) 0xdc,
                        (byte) 0xdd,
                        (byte) 0xde,
                        (byte) 0xdf,
                        (byte) 0xdb,
                        (byte) 0xc6,
                        (byte) 0x90,
                        (byte) 0x9f,
                        (byte) 0x80,
                        (byte) 0x8f,
                        (byte) 0xff,
                        0x7f,
                        0x00
                    };
                    b[rnd.nextInt(b.length)] = interesting[rnd.nextInt(interesting.length)];
                }
                case 3 -> { // delete a run
                    int at = rnd.nextInt(b.length);
                    int len = Math.min(b.length - at, 1 + rnd.nextInt(8));
                    byte[] n = new byte[b.length - len];
                    System.arraycopy(b, 0, n, 0, at);
                    System.arraycopy(b, at + len, n, at, b.length - at - len);
                    b = n;
                }
                case 4 -> { // duplicate a run
                    int at = rnd.nextInt(b.length);
                    int len = Math.min(b.length - at, 1 + rnd.nextInt(16));
                    byte[] n = new byte[b.length + len];
                    System.arraycopy(b, 0, n, 0, at + len);
                    System.arraycopy(b, at, n, at + len, b.length - at);
                    b = n;
                }
                default -> b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8)); // flip a bit
            }
        }
        return b;
    }
}
