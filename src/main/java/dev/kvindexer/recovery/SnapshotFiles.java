package dev.kvindexer.recovery;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files of a node's {@code --data-dir}: each write leaves one whole snapshot of the node's state or none, and a cold
 * start gets back the newest snapshot that checks out. The body is the caller's; this class owns the files, their
 * envelope and checksum, rotation and the rejection of bad files.
 *
 * <p>A snapshot is named {@code snapshot-<seq>.kvsnap}, {@code <seq>} twenty zero-padded decimal digits one past the
 * highest present (here or in {@code rejected/}), and reads, little-endian:
 *
 * <pre>
 * header   "KVIXDATA"   u16 format version (1)   u16 flags (0)   u64 created, epoch millis
 * body     the caller's bytes
 * trailer  u64 body length   u32 CRC32C of the body   "KVIXEND1"
 * </pre>
 *
 * Length and checksum trail the body so that it streams to disk while they are computed. A write goes to {@code
 * .snapshot-<seq>.tmp}, is forced to disk and renamed atomically, so a crash leaves the previous snapshots and at most a
 * temporary file, which the next start deletes. A snapshot that fails its checks moves to {@code rejected/}, which
 * keeps the newest {@value #MAX_REJECTED}.
 */
public final class SnapshotFiles {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotFiles.class);

    public static final int FORMAT_VERSION = 1;
    /** Good snapshots kept after a write: the newest, and one to fall back on should it prove bad. */
    public static final int KEEP = 2;

    static final int MAX_REJECTED = 8;
    static final String REJECTED = "rejected";

    private static final byte[] HEAD_MAGIC = "KVIXDATA".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END_MAGIC = "KVIXEND1".getBytes(StandardCharsets.US_ASCII);
    private static final int HEADER_BYTES = 8 + 2 + 2 + 8;
    private static final int TRAILER_BYTES = 8 + 4 + 8;
    private static final int ENVELOPE_BYTES = HEADER_BYTES + TRAILER_BYTES;
    private static final int BUFFER_BYTES = 64 * 1024;
    private static final Pattern SNAPSHOT = Pattern.compile("snapshot-(\\d{20})\\.kvsnap");
    /** A clash in {@code rejected/} appends {@code .1}, {@code .2}, … to the name. */
    private static final Pattern REJECTED_SNAPSHOT = Pattern.compile("snapshot-(\\d{20})\\.kvsnap(?:\\.(\\d+))?");

    private static final Comparator<Numbered> NEWEST_FIRST = Comparator.comparingLong(Numbered::seq)
            .thenComparingLong(Numbered::clash)
            .reversed();

    @FunctionalInterface
    public interface BodyWriter {
        void write(OutputStream out) throws IOException;
    }

    @FunctionalInterface
    public interface BodyReader<T> {
        T read(InputStream body) throws IOException;
    }

    /** {@code bytes} is the whole file's size; {@code millis} the time the write took. */
    public record Written(Path file, long bytes, long millis) {}

    /** {@code bytes} is the whole file's size. */
    public record Loaded<T>(Path file, long createdMillis, long bytes, T value) {}

    /** {@code file} is where the snapshot was when it was rejected, before it moved aside. */
    public record Rejected(Path file, String reason) {}

    private record Numbered(Path file, long seq, long clash) {}

    private record Envelope(long created, long bodyBytes, long crc, long fileBytes) {}

    /** Why a snapshot cannot be loaded; no stack trace, since the reason is all anyone reads of it. */
    private static final class Bad extends Exception {
        Bad(String reason) {
            super(reason, null, false, false);
        }
    }

    private final Path dir;
    private final long maxBytes;

    /**
     * Opens (creating if needed) the directory; removes leftover temporary files of an interrupted write. Throws
     * IOException if the directory cannot be created or is not a directory.
     */
    public SnapshotFiles(Path dir, long maxBytes) throws IOException {
        if (maxBytes < ENVELOPE_BYTES) {
            throw new IllegalArgumentException(
                    "a snapshot limit of " + maxBytes + " bytes cannot hold the " + ENVELOPE_BYTES + "-byte envelope");
        }
        this.dir = dir;
        this.maxBytes = maxBytes;
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new IOException("the data directory " + dir + " is not a directory");
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IOException("cannot create the data directory " + dir + ": " + describe(e), e);
        }
        try (DirectoryStream<Path> temps = Files.newDirectoryStream(dir, ".snapshot-*.tmp")) {
            for (Path temp : temps) {
                try {
                    Files.deleteIfExists(temp);
                    LOG.info("Removed {}, left by a snapshot write that did not finish", temp);
                } catch (IOException e) {
                    // A read-only data directory can still be loaded from; its writes will report the problem.
                    LOG.warn("Could not remove the unfinished snapshot {}: {}", temp, describe(e));
                }
            }
        }
    }

    public Path dir() {
        return dir;
    }

    /** Writes one snapshot crash-safely and removes good snapshots beyond {@link #KEEP} (oldest first). */
    public synchronized Written write(BodyWriter body) throws IOException {
        long started = System.nanoTime();
        String seq = String.format("%020d", nextSequence());
        Path target = dir.resolve("snapshot-" + seq + ".kvsnap");
        Path temp = dir.resolve(".snapshot-" + seq + ".tmp");
        long bytes;
        try {
            bytes = writeTemp(temp, body);
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            discard(temp, e);
            throw new IOException("could not write snapshot " + target + ": " + describe(e), e);
        } catch (RuntimeException | Error e) {
            discard(temp, e);
            throw e;
        }
        syncDirectory();
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        LOG.debug("Wrote snapshot {} ({} bytes in {} ms)", target, bytes, millis);
        rotate();
        return new Written(target, bytes, millis);
    }

    private long writeTemp(Path temp, BodyWriter body) throws IOException {
        try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            OutputStream file = new BufferedOutputStream(Channels.newOutputStream(channel), BUFFER_BYTES);
            file.write(ByteBuffer.allocate(HEADER_BYTES)
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .put(HEAD_MAGIC)
                    .putShort((short) FORMAT_VERSION)
                    .putShort((short) 0)
                    .putLong(System.currentTimeMillis())
                    .array());
            SnapshotBody.Output out = new SnapshotBody.Output(file, maxBytes, ENVELOPE_BYTES);
            body.write(out);
            file.write(ByteBuffer.allocate(TRAILER_BYTES)
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .putLong(out.length())
                    .putInt(out.crc())
                    .put(END_MAGIC)
                    .array());
            file.flush();
            channel.force(true);
            return channel.size();
        }
    }

    private static void discard(Path temp, Throwable failure) {
        try {
            Files.deleteIfExists(temp);
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }

    /** The rename survives a power cut only once the directory's entry is on disk too. */
    private void syncDirectory() {
        try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
            directory.force(true);
        } catch (IOException e) {
            // Some file systems cannot open or force a directory; there the rename is as durable as it gets.
            LOG.debug("Could not force the directory {}: {}", dir, describe(e));
        }
    }

    /**
     * Deletes everything older than the newest {@link #KEEP} snapshots whose envelope is whole. Only the envelope is
     * checked, as a checksum would read every kept snapshot on every write; a bad one in between stays for the next
     * load to reject.
     */
    private void rotate() {
        List<Path> snapshots;
        try {
            snapshots = snapshots();
        } catch (IOException e) {
            LOG.warn("Could not list the snapshots in {} to remove old ones: {}", dir, describe(e));
            return;
        }
        int good = 0;
        for (Path file : snapshots) {
            if (good < KEEP) {
                good += intact(file) ? 1 : 0;
                continue;
            }
            try {
                Files.deleteIfExists(file);
                LOG.debug("Removed the old snapshot {}", file);
            } catch (IOException e) {
                LOG.warn("Could not remove the old snapshot {}: {}", file, describe(e));
            }
        }
    }

    private boolean intact(Path file) {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            envelope(channel);
            return true;
        } catch (IOException | Bad e) {
            return false;
        }
    }

    /** The snapshot files present, newest first (by the sequence in the name, not mtime). */
    public List<Path> snapshots() throws IOException {
        return numbered(dir, SNAPSHOT).stream().map(Numbered::file).toList();
    }

    private long nextSequence() throws IOException {
        return Stream.concat(
                                numbered(dir, SNAPSHOT).stream(),
                                numbered(dir.resolve(REJECTED), REJECTED_SNAPSHOT).stream())
                        .mapToLong(Numbered::seq)
                        .max()
                        .orElse(0)
                + 1;
    }

    private static List<Numbered> numbered(Path folder, Pattern names) throws IOException {
        if (!Files.isDirectory(folder)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(folder)) {
            return files.map(file -> parseName(file, names))
                    .flatMap(Optional::stream)
                    .filter(n -> Files.isRegularFile(n.file()))
                    .sorted(NEWEST_FIRST)
                    .toList();
        }
    }

    private static Optional<Numbered> parseName(Path file, Pattern names) {
        Matcher m = names.matcher(file.getFileName().toString());
        if (!m.matches()) {
            return Optional.empty();
        }
        try {
            long clash = m.groupCount() > 1 && m.group(2) != null ? Long.parseLong(m.group(2)) : 0;
            return Optional.of(new Numbered(file, Long.parseLong(m.group(1)), clash));
        } catch (NumberFormatException e) {
            // Twenty digits can outgrow a long, which no name this class writes does.
            return Optional.empty();
        }
    }

    /**
     * Tries the snapshots newest first: validates each (size {@literal <=} maxBytes checked from the file size before
     * reading anything, envelope, version, length, checksum) and then parses its body with {@code reader}; a file
     * failing either is moved aside with its reason logged at WARN, and the next older one is tried. Returns empty
     * when none is good. {@code rejected} receives each rejection (for reports/metrics).
     */
    public synchronized <T> Optional<Loaded<T>> loadNewest(BodyReader<T> reader, Consumer<Rejected> rejected)
            throws IOException {
        for (Path file : snapshots()) {
            try {
                Loaded<T> loaded = load(file, reader);
                LOG.info(
                        "Loaded snapshot {} ({} bytes, written {})",
                        file,
                        loaded.bytes(),
                        Instant.ofEpochMilli(loaded.createdMillis()));
                return Optional.of(loaded);
            } catch (Bad e) {
                LOG.warn("Rejected snapshot {}: {}; trying the next older one", file, e.getMessage());
                rejected.accept(new Rejected(file, e.getMessage()));
                moveAside(file);
            }
        }
        return Optional.empty();
    }

    private <T> Loaded<T> load(Path file, BodyReader<T> reader) throws Bad {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            Envelope envelope = envelope(channel);
            verify(channel, envelope);
            T value;
            try {
                value = reader.read(new BufferedInputStream(
                        new SnapshotBody.Input(channel, HEADER_BYTES, envelope.bodyBytes()), BUFFER_BYTES));
            } catch (IOException | RuntimeException e) {
                throw new Bad(e.getMessage() != null ? e.getMessage() : e.toString());
            }
            return new Loaded<>(file, envelope.created(), envelope.fileBytes(), value);
        } catch (IOException e) {
            throw new Bad("unreadable: " + describe(e));
        }
    }

    /** Checks all but the checksum, in the documented order; cheap, as it reads the header and trailer only. */
    private Envelope envelope(FileChannel channel) throws IOException, Bad {
        long size = channel.size();
        if (size > maxBytes) {
            throw new Bad("larger than the limit of " + maxBytes + " bytes");
        }
        if (size < ENVELOPE_BYTES) {
            throw new Bad("truncated");
        }
        ByteBuffer header = readAt(channel, 0, HEADER_BYTES);
        if (!holds(header, 0, HEAD_MAGIC)) {
            throw new Bad("not a kvindexer data snapshot");
        }
        int version = Short.toUnsignedInt(header.getShort(8));
        if (version != FORMAT_VERSION) {
            throw new Bad("format version " + version + ", this node reads " + FORMAT_VERSION);
        }
        ByteBuffer trailer = readAt(channel, size - TRAILER_BYTES, TRAILER_BYTES);
        if (!holds(trailer, 12, END_MAGIC)) {
            throw new Bad("truncated or corrupted: no end marker");
        }
        long declared = trailer.getLong(0);
        long held = size - ENVELOPE_BYTES;
        if (declared != held) {
            throw new Bad(
                    "truncated or corrupted: the trailer declares " + declared + " body bytes, the file holds " + held);
        }
        return new Envelope(header.getLong(12), held, Integer.toUnsignedLong(trailer.getInt(8)), size);
    }

    private static void verify(FileChannel channel, Envelope envelope) throws IOException, Bad {
        CRC32C crc = new CRC32C();
        ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES);
        long end = HEADER_BYTES + envelope.bodyBytes();
        for (long position = HEADER_BYTES; position < end; ) {
            buffer.clear().limit((int) Math.min(BUFFER_BYTES, end - position));
            int n = channel.read(buffer, position);
            if (n < 0) {
                throw new EOFException("the file shrank while being read");
            }
            position += n;
            crc.update(buffer.flip());
        }
        if (crc.getValue() != envelope.crc()) {
            throw new Bad("checksum mismatch");
        }
    }

    private static ByteBuffer readAt(FileChannel channel, long position, int length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        while (buffer.hasRemaining()) {
            if (channel.read(buffer, position + buffer.position()) < 0) {
                throw new EOFException("the file shrank while being read");
            }
        }
        return buffer;
    }

    private static boolean holds(ByteBuffer buffer, int offset, byte[] magic) {
        return buffer.slice(offset, magic.length).equals(ByteBuffer.wrap(magic));
    }

    /**
     * Moves a rejected snapshot to {@code rejected/}, out of the next load's way but kept for a post-mortem, and trims
     * that folder to the newest {@value #MAX_REJECTED}.
     */
    private void moveAside(Path file) {
        Path folder = dir.resolve(REJECTED);
        Path target = folder.resolve(file.getFileName());
        try {
            Files.createDirectories(folder);
            for (int clash = 1; Files.exists(target); clash++) {
                target = folder.resolve(file.getFileName() + "." + clash);
            }
            Files.move(file, target);
            LOG.info("Moved the rejected snapshot {} to {}", file, target);
        } catch (IOException e) {
            // A read-only data directory still has older snapshots to offer; this one is just skipped.
            LOG.warn("Could not move the rejected snapshot {} to {}: {}", file, target, describe(e));
            return;
        }
        try {
            List<Numbered> kept = numbered(folder, REJECTED_SNAPSHOT);
            for (Numbered old : kept.subList(Math.min(MAX_REJECTED, kept.size()), kept.size())) {
                Files.deleteIfExists(old.file());
            }
        } catch (IOException e) {
            LOG.warn("Could not trim {} to {} files: {}", folder, MAX_REJECTED, describe(e));
        }
    }

    /** The exception's kind matters when its message is only a path, as with a permission denied. */
    private static String describe(IOException e) {
        return e.getClass() == IOException.class
                ? e.getMessage()
                : e.getClass().getSimpleName() + ": " + e.getMessage();
    }
}
