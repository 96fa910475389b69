package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.load.LoadEvent;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

/**
 * A reservation, local or mirrored: what was booked, how far its lifecycle has gone, and a version that grows with
 * every step of it; the same record is what replicas share in a cluster. {@code incarnation} tells one booking of an
 * id from a later one.
 */
public record Reservation(
        String id,
        PartitionKey partition,
        int blockSize,
        long workerId,
        int dpRank,
        String loraName,
        long[] sequenceHashes,
        long prefillHint,
        boolean trackPrefill,
        Long expectedOutputTokens,
        boolean prefillDone,
        long outputBlocks,
        double decay,
        long bookedAtMillis,
        long incarnation,
        long version) {
    /** A new booking of what {@code added} says: nothing of its lifecycle has happened yet. */
    static Reservation booked(LoadEvent.Added added, long bookedAtMillis, long incarnation) {
        return new Reservation(
                added.requestId(),
                added.partition(),
                added.blockSize(),
                added.workerId(),
                added.dpRank(),
                added.loraName(),
                added.sequenceHashes(),
                added.prefillHint(),
                added.trackPrefill(),
                added.expectedOutputTokens(),
                false,
                0,
                Double.NaN,
                bookedAtMillis,
                incarnation,
                1);
    }

    /** The same booking with nothing of its lifecycle applied yet, to be caught up step by step. */
    Reservation unstarted() {
        return step(false, 0, Double.NaN, 1);
    }

    /** The prefill tokens it puts on its rank: none when prefill is not tracked. */
    long prefillLoad() {
        return trackPrefill ? prefillHint : 0;
    }

    public Reservation withPrefillDone() {
        return step(true, outputBlocks, decay, version + 1);
    }

    /** One more output block; NaN keeps the decay fraction. */
    public Reservation withOutputBlock(double decayFraction) {
        return step(prefillDone, outputBlocks + 1, Double.isNaN(decayFraction) ? decay : decayFraction, version + 1);
    }

    Reservation withDecay(double fraction) {
        return step(prefillDone, outputBlocks, fraction, version + 1);
    }

    Reservation withVersion(long newVersion) {
        return step(prefillDone, outputBlocks, decay, newVersion);
    }

    private Reservation step(boolean prefillDone, long outputBlocks, double decay, long version) {
        return new Reservation(
                id,
                partition,
                blockSize,
                workerId,
                dpRank,
                loraName,
                sequenceHashes,
                prefillHint,
                trackPrefill,
                expectedOutputTokens,
                prefillDone,
                outputBlocks,
                decay,
                bookedAtMillis,
                incarnation,
                version);
    }

    public byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(96 + 8 * sequenceHashes.length);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeUTF(id);
            out.writeUTF(partition.modelName());
            out.writeUTF(partition.routingGroup());
            out.writeInt(blockSize);
            out.writeLong(workerId);
            out.writeInt(dpRank);
            out.writeBoolean(loraName != null);
            if (loraName != null) {
                out.writeUTF(loraName);
            }
            out.writeInt(sequenceHashes.length);
            for (long h : sequenceHashes) {
                out.writeLong(h);
            }
            out.writeLong(prefillHint);
            out.writeBoolean(trackPrefill);
            out.writeLong(expectedOutputTokens == null ? -1 : expectedOutputTokens);
            out.writeBoolean(prefillDone);
            out.writeLong(outputBlocks);
            out.writeDouble(decay);
            out.writeLong(bookedAtMillis);
            out.writeLong(incarnation);
            out.writeLong(version);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return bytes.toByteArray();
    }

    /** Reads a record; a count that the bytes cannot hold is refused before anything is allocated. */
    public static Reservation decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            String id = in.readUTF();
            PartitionKey p = new PartitionKey(in.readUTF(), in.readUTF());
            int blockSize = in.readInt();
            long worker = in.readLong();
            int rank = in.readInt();
            String lora = in.readBoolean() ? in.readUTF() : null;
            int n = in.readInt();
            if (n < 0 || (long) n * 8 > in.available()) {
                throw new IllegalArgumentException("a reservation declares " + n + " sequence hashes");
            }
            long[] hashes = new long[n];
            for (int i = 0; i < n; i++) {
                hashes[i] = in.readLong();
            }
            long hint = in.readLong();
            boolean track = in.readBoolean();
            long expected = in.readLong();
            return new Reservation(
                    id,
                    p,
                    blockSize,
                    worker,
                    rank,
                    lora,
                    hashes,
                    hint,
                    track,
                    expected < 0 ? null : expected,
                    in.readBoolean(),
                    in.readLong(),
                    in.readDouble(),
                    in.readLong(),
                    in.readLong(),
                    in.readLong());
        } catch (IOException e) {
            throw new IllegalArgumentException("undecodable reservation: " + e.getMessage(), e);
        }
    }
}
