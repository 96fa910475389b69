package dev.kvindexer.recovery;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link SnapshotFiles} on real files: what a write leaves behind when it succeeds or fails, and which snapshot a load
 * settles on when the newer ones are damaged.
 */
class SnapshotFilesTest {
    private static final long LIMIT = 1 << 20;
    /** Where the layout puts the version and the body: after the 8-byte magic, and after the 20-byte header. */
    private static final int VERSION_AT = 8;

    private static final int BODY_AT = 20;

    @TempDir
    Path dir;

    private final List<SnapshotFiles.Rejected> rejections = new ArrayList<>();
    private final List<String> parsed = new ArrayList<>();

    private static SnapshotFiles.Written write(SnapshotFiles files, String body) throws IOException {
        return files.write(out -> out.write(body.getBytes(UTF_8)));
    }

    /** Loads with a reader that notes every body it is handed. */
    private Optional<SnapshotFiles.Loaded<String>> load(SnapshotFiles files) throws IOException {
        return files.loadNewest(
                in -> {
                    String body = new String(in.readAllBytes(), UTF_8);
                    parsed.add(body);
                    return body;
                },
                rejections::add);
    }

    private static String name(long seq) {
        return String.format("snapshot-%020d.kvsnap", seq);
    }

    private static List<String> names(Path folder) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }

    private static void patch(Path file, long position, byte[] bytes) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(bytes), position);
        }
    }

    private static void flip(Path file, long position) throws IOException {
        byte[] all = Files.readAllBytes(file);
        patch(file, position, new byte[] {(byte) ~all[(int) position]});
    }

    private void assertRejected(Path file, String reason) {
        assertTrue(rejections.contains(new SnapshotFiles.Rejected(file, reason)), () -> "rejections: " + rejections);
        assertFalse(Files.exists(file), "still in the data directory");
        assertTrue(Files.isRegularFile(dir.resolve("rejected").resolve(file.getFileName())), "not in rejected/");
    }

    @Test
    void theNewestOfTwoWritesLoadsWithItsBodyTimeAndSize() throws IOException {
        SnapshotFiles files = new SnapshotFiles(dir, LIMIT);
        write(files, "first");
        long before = System.currentTimeMillis();
        SnapshotFiles.Written second = write(files, "second");
        long after = System.currentTimeMillis();

        assertEquals(dir.resolve(name(2)), second.file());
        assertEquals(Files.size(second.file()), second.bytes());
        assertEquals(40 + "second".length(), second.bytes());
        SnapshotFiles.Loaded<String> loaded = load(files).orElseThrow();
        assertEquals("second", loaded.value());
        assertEquals(second.file(), loaded.file());
        assertEquals(second.bytes(), loaded.bytes());
        assertTrue(
                loaded.createdMillis() >= before && loaded.createdMillis() <= after,
                () -> loaded.createdMillis() + " outside [" + before + ", " + after + "]");
        assertEquals(List.of("second"), parsed);
        assertEquals(List.of(), rejections);
    }

    @Test
    void fourWritesLeaveTheNewestTwo() throws IOException {
        SnapshotFiles files = new SnapshotFiles(dir, LIMIT);
        for (String body : List.of("1", "2", "3", "4")) {
            write(files, body);
        }

        assertEquals(List.of(dir.resolve(name(4)), dir.resolve(name(3))), files.snapshots());
        assertEquals(List.of(name(3), name(4)), names(dir));
    }

    /** Something done to a snapshot file after it was written. */
    @FunctionalInterface
    private interface Damage {
        void apply(Path file) throws IOException;
    }

    /**
     * Writes two snapshots and damages the newer: the load falls back to the older, moves the newer aside for {@code
     * reason}, and never hands the damaged body to the reader.
     */
    private void assertDamagedNewestFallsBack(Damage damage, String reason) throws IOException {
        SnapshotFiles files = new SnapshotFiles(dir, LIMIT);
        write(files, "first");
        Path newest = write(files, "second").file();
        damage.apply(newest);

        assertEquals("first", load(files).orElseThrow().value());
        assertRejected(newest, reason);
        assertEquals(List.of("first"), parsed);
    }

    @Test
    void aTruncatedNewestMovesAsideAndTheOlderLoads() throws IOException {
        assertDamagedNewestFallsBack(
                newest -> {
                    try (FileChannel channel = FileChannel.open(newest, StandardOpenOption.WRITE)) {
                        channel.truncate(channel.size() - 5);
                    }
                },
                "truncated or corrupted: no end marker");
    }

    @Test
    void aFileShorterThanTheEnvelopeIsTruncated() throws IOException {
        assertDamagedNewestFallsBack(newest -> Files.write(newest, "KVIXDATA".getBytes(UTF_8)), "truncated");
    }

    @Test
    void aTrailerDeclaringAnotherLengthIsCorrupted() throws IOException {
        // The trailer's u64 length is its first field, 20 bytes from the end; "second" is 6 bytes.
        assertDamagedNewestFallsBack(
                newest -> patch(newest, Files.size(newest) - 20, new byte[] {7}),
                "truncated or corrupted: the trailer declares 7 body bytes, the file holds 6");
    }

    @Test
    void aFlippedBodyByteFailsTheChecksumAndTheOlderLoads() throws IOException {
        assertDamagedNewestFallsBack(newest -> flip(newest, BODY_AT + 3), "checksum mismatch");
    }

    @Test
    void anotherFormatVersionIsRejected() throws IOException {
        assertDamagedNewestFallsBack(
                newest -> patch(newest, VERSION_AT, new byte[] {2, 0}), "format version 2, this node reads 1");
    }

    @Test
    void aFileWithAnotherMagicIsNotASnapshot() throws IOException {
        assertDamagedNewestFallsBack(
                newest -> patch(newest, 0, "KVIXDUMP".getBytes(UTF_8)), "not a kvindexer data snapshot");
    }

    @Test
    void aSnapshotOverTheLimitIsRejectedWithoutReachingTheReader() throws IOException {
        SnapshotFiles writer = new SnapshotFiles(dir, LIMIT);
        write(writer, "small");
        Path big = write(writer, "x".repeat(1000)).file();

        SnapshotFiles files = new SnapshotFiles(dir, 500);
        assertEquals("small", load(files).orElseThrow().value());
        assertRejected(big, "larger than the limit of 500 bytes");
        assertEquals(List.of("small"), parsed);
    }

    @Test
    void aBodyTheReaderRefusesIsRejectedAndTheOlderLoads(@TempDir Path scratch) throws IOException {
        SnapshotFiles files = new SnapshotFiles(dir, LIMIT);
        write(files, "1");
        Path ioFailure = write(files, "io").file();
        // A third write here would rotate the first away: this one comes from elsewhere.
        Path malformed =
                Files.copy(write(new SnapshotFiles(scratch, LIMIT), "malformed").file(), dir.resolve(name(3)));

        Optional<SnapshotFiles.Loaded<Integer>> loaded = files.loadNewest(
                in -> {
                    String body = new String(in.readAllBytes(), UTF_8);
                    if (body.equals("io")) {
                        throw new IOException("unexpected end of the partition table");
                    }
                    return Integer.parseInt(body);
                },
                rejections::add);

        assertEquals(1, loaded.orElseThrow().value());
        assertRejected(malformed, "For input string: \"malformed\"");
        assertRejected(ioFailure, "unexpected end of the partition table");
    }

    @Test
    void whenEverySnapshotIsBadNothingLoadsAndAllMoveAside() throws IOException {
        SnapshotFiles files = new SnapshotFiles(dir, LIMIT);
        Path older = write(files, "first").file();
        Path newest = write(files, "second").file();
        flip(older, BODY_AT);
        patch(newest, 0, "XXXXXXXX".getBytes(UTF_8));

        assertEquals(Optional.empty(), load(files));
        assertRejected(newest, "not a kvindexer data snapshot");
        assertRejected(older, "checksum mismatch");
        assertEquals(List.of(), files.snapshots());
        assertEquals(List.of(), parsed);
    }

    @Test
    void theRejectedFolderRenamesOnAClashAndKeepsTheNewestEight() throws IOException {
        Path rejected = Files.createDirectories(dir.resolve("rejected"));
        Files.write(rejected.resolve(name(10)), new byte[] {1});
        for (long seq = 1; seq <= 10; seq++) {
            Files.write(dir.resolve(name(seq)), new byte[] {1});
        }

        assertEquals(Optional.empty(), load(new SnapshotFiles(dir, LIMIT)));
        assertEquals(10, rejections.size());
        List<String> kept = new ArrayList<>(List.of(name(10), name(10) + ".1"));
        for (long seq = 4; seq <= 9; seq++) {
            kept.add(name(seq));
        }
        assertEquals(kept.stream().sorted().toList(), names(rejected));
    }

    @Test
    void openingRemovesTheTemporaryFileOfAnInterruptedWriteOnly() throws IOException {
        Path temp = Files.write(dir.resolve(".snapshot-00000000000000000007.tmp"), new byte[] {1, 2, 3});
        Path other = Files.write(dir.resolve("notes.tmp"), new byte[] {1});

        new SnapshotFiles(dir, LIMIT);

        assertFalse(Files.exists(temp));
        assertTrue(Files.exists(other));
    }

    @Test
    void openingAFileAsTheDirectoryFails() throws IOException {
        Path file = Files.write(dir.resolve("data"), new byte[] {1});

        IOException e = assertThrows(IOException.class, () -> new SnapshotFiles(file, LIMIT));
        assertTrue(e.getMessage().contains("is not a directory"), e.getMessage());
    }

    @Test
    void aWriteIntoAReadOnlyDirectoryFailsAndLeavesNoTemporaryFile() throws IOException {
        SnapshotFiles files = new SnapshotFiles(dir, LIMIT);
        write(files, "first");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            // Root writes through the permissions, and then there is no failure to test.
            boolean writable;
            try {
                Files.delete(Files.createFile(dir.resolve("probe")));
                writable = true;
            } catch (IOException e) {
                writable = false;
            }
            assumeFalse(writable, "the read-only directory is writable (running as root?)");

            IOException e = assertThrows(IOException.class, () -> write(files, "second"));
            assertTrue(e.getMessage().contains("could not write snapshot"), e.getMessage());
            assertEquals(List.of(name(1)), names(dir));
        } finally {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    @Test
    void aWriterThatFailsHalfWayLeavesThePreviousSnapshotsAsTheyWere() throws IOException {
        SnapshotFiles files = new SnapshotFiles(dir, LIMIT);
        write(files, "first");
        write(files, "second");
        List<Path> before = files.snapshots();

        IOException e = assertThrows(
                IOException.class,
                () -> files.write(out -> {
                    out.write(new byte[100_000]);
                    throw new IOException("the index changed under the writer");
                }));

        assertTrue(e.getMessage().contains("the index changed under the writer"), e.getMessage());
        assertEquals(before, files.snapshots());
        assertEquals(List.of(name(1), name(2)), names(dir));
        assertEquals("second", load(files).orElseThrow().value());
    }

    @Test
    void aBodyPastTheLimitFailsTheWriteAndLeavesNoFile() throws IOException {
        SnapshotFiles files = new SnapshotFiles(dir, 100);
        write(files, "first");

        IOException e = assertThrows(IOException.class, () -> write(files, "x".repeat(61)));

        assertTrue(e.getMessage().contains("larger than the limit of 100 bytes"), e.getMessage());
        assertEquals(List.of(name(1)), names(dir));
        write(files, "x".repeat(60));
        assertEquals(List.of(name(1), name(2)), names(dir));
    }

    @Test
    void numberingContinuesPastTheFilesOfAnEarlierRun() throws IOException {
        SnapshotFiles first = new SnapshotFiles(dir, LIMIT);
        for (String body : List.of("1", "2", "3")) {
            write(first, body);
        }

        SnapshotFiles.Written next = write(new SnapshotFiles(dir, LIMIT), "4");

        assertEquals(dir.resolve("snapshot-00000000000000000004.kvsnap"), next.file());
        assertEquals("4", load(new SnapshotFiles(dir, LIMIT)).orElseThrow().value());
    }
}
