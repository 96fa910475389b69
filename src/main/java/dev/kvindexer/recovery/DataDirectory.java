package dev.kvindexer.recovery;

import dev.kvindexer.dump.SnapshotReader;
import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.metrics.DataDirFigures;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PartitionSnapshot;
import dev.kvindexer.partition.PartitionView;
import dev.kvindexer.partition.PeerSnapshot;
import dev.kvindexer.registry.LocalRegistrar;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.registry.Registrar;
import dev.kvindexer.registry.RegistrationJson;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiPredicate;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's data directory (docs/operations.md#data-directory): every partition's exact snapshot and the registrations
 * the node serves, written as one {@link SnapshotFiles} snapshot, and read back at a cold start. The body of a
 * snapshot file is {@code u32 length, JSON {"registrations": [...]}, snapshot document} (the document /dump serves to
 * peers, docs/protocol/dump.md#binary-snapshot).
 */
public final class DataDirectory {
    private static final Logger LOG = LoggerFactory.getLogger(DataDirectory.class);
    /** Registrations of thousands of engines take a few megabytes; anything far past that is not ours. */
    static final int MAX_REGISTRATIONS_BYTES = 256 * 1024 * 1024;
    /** How long a cold start waits for registrations another restoring node announces (see awaitAnnounced). */
    private static final java.time.Duration ANNOUNCEMENT_WAIT = java.time.Duration.ofSeconds(5);
    /** A partition's actor answers a snapshot within this, or the partition is written as failed. */
    private static final long SNAPSHOT_STEP_TIMEOUT_SECONDS = 60;

    /** What a snapshot file held: the registrations, then each partition as the snapshot collector read it. */
    public record Contents(List<RegisterRequest> registrations, Map<PartitionKey, SnapshotCollector.Collected> index) {}

    private final Vertx vertx;
    private final SnapshotFiles files;
    private final Registry registry;
    private final long maxBytes;
    private final AtomicBoolean writing = new AtomicBoolean();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong failedWrites = new AtomicLong();
    private final AtomicLong rejectedFiles = new AtomicLong();
    private volatile SnapshotFiles.Written lastWrite;
    private volatile long lastWriteEpochMillis;
    private volatile String lastError;
    private volatile Future<SnapshotFiles.Written> inFlight;

    private DataDirectory(Vertx vertx, SnapshotFiles files, Registry registry, long maxBytes) {
        this.vertx = vertx;
        this.files = files;
        this.registry = registry;
        this.maxBytes = maxBytes;
    }

    /**
     * Opens {@code dir}, creating it if needed. A directory that cannot be created fails the start: the operator asked
     * for durability and would otherwise not have it.
     */
    public static DataDirectory open(Vertx vertx, Path dir, long maxBytes, Registry registry) throws IOException {
        return new DataDirectory(vertx, new SnapshotFiles(dir, maxBytes), registry, maxBytes);
    }

    public Path dir() {
        return files.dir();
    }

    /**
     * Takes every partition's exact snapshot (each in one step of its actor, as /dump does), then writes them with the
     * registrations on a worker thread. A write still under way when the next is due is not started twice.
     */
    public Future<SnapshotFiles.Written> write() {
        if (!writing.compareAndSet(false, true)) {
            return Future.failedFuture(new IllegalStateException("a snapshot is being written"));
        }
        Future<SnapshotFiles.Written> started = startWrite();
        inFlight = started;
        return started;
    }

    /**
     * The last snapshot before the node stops: after the write under way, if any, so that it holds everything the
     * node applied until now.
     */
    public Future<SnapshotFiles.Written> writeFinal() {
        Future<SnapshotFiles.Written> running = inFlight;
        Future<?> before = running == null ? Future.succeededFuture() : running.otherwiseEmpty();
        return before.compose(ignored -> write());
    }

    private Future<SnapshotFiles.Written> startWrite() {
        long started = System.nanoTime();
        List<RegisterRequest> registrations = new ArrayList<>();
        for (Listener l : registry.listeners()) {
            registrations.add(RegisterRequest.of(l));
        }
        List<PartitionRef> partitions = new ArrayList<>();
        registry.partitions().forEach(p -> partitions.add(PartitionView.hostedOf(p)));
        return vertx.<SnapshotFiles.Written>executeBlocking(
                        () -> files.write(out -> writeBody(out, registrations, partitions)), false)
                .andThen(ar -> {
                    writing.set(false);
                    if (ar.succeeded()) {
                        // The whole of it: the actors' snapshot step as well as the file.
                        lastWrite = new SnapshotFiles.Written(
                                ar.result().file(), ar.result().bytes(), (System.nanoTime() - started) / 1_000_000);
                        lastWriteEpochMillis = System.currentTimeMillis();
                        writes.incrementAndGet();
                        if (lastError != null) {
                            LOG.info("data directory {} writable again", files.dir());
                        }
                        lastError = null;
                        LOG.debug(
                                "wrote {} ({} bytes, {} ms)",
                                ar.result().file(),
                                ar.result().bytes(),
                                ar.result().millis());
                    } else {
                        failedWrites.incrementAndGet();
                        String error = ar.cause().getMessage() != null
                                ? ar.cause().getMessage()
                                : ar.cause().toString();
                        if (!error.equals(lastError)) {
                            LOG.error("could not write a snapshot to the data directory: {}", error);
                        }
                        lastError = error;
                    }
                });
    }

    /**
     * Writes the registrations, then each partition's exact snapshot, taken one partition at a time (each in one
     * step of its actor) and written before the next is asked for: the heap holds one partition's snapshot at a time,
     * not the whole index's. Each partition is exact at its own moment, with its own watermarks, which is all a stream
     * needs: it lives in one partition. Runs on a worker thread, so it may wait for each actor.
     */
    private static void writeBody(OutputStream out, List<RegisterRequest> registrations, List<PartitionRef> partitions)
            throws IOException {
        JsonArray regs = new JsonArray();
        registrations.forEach(r -> regs.add(RegistrationJson.encode(r)));
        byte[] json = new JsonObject().put("registrations", regs).encode().getBytes(StandardCharsets.UTF_8);
        out.write(ByteBuffer.allocate(4)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putInt(json.length)
                .array());
        out.write(json);
        out.write(SnapshotWriter.header());
        for (PartitionRef p : partitions) {
            byte[] payload;
            try {
                payload = p.snapshot(PartitionSnapshot.Order.DEPTH_FIRST)
                        .toCompletionStage()
                        .toCompletableFuture()
                        .get(SNAPSHOT_STEP_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                        .payload();
            } catch (ExecutionException | TimeoutException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                out.write(SnapshotWriter.failedSection(p.key(), String.valueOf(cause.getMessage())));
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(
                        "interrupted while taking the snapshot of " + p.key().dumpKey());
            }
            out.write(SnapshotWriter.sectionHead(p.key(), p.blockSize(), payload.length));
            out.write(payload);
        }
        out.write(SnapshotWriter.end());
    }

    /**
     * The newest good snapshot, or empty when there is none. A file that fails (truncated, corrupted, of another
     * version, too large, or with a body that does not read) is moved aside with its reason and the next older one is
     * tried. Blocking.
     */
    public Optional<SnapshotFiles.Loaded<Contents>> load() throws IOException {
        String source = files.dir().toString();
        return files.loadNewest(in -> readBody(in, maxBytes, source), r -> rejectedFiles.incrementAndGet());
    }

    /** A snapshot file's body; untrusted as a peer's: every declared size is checked before anything is allocated. */
    static Contents readBody(InputStream in, long maxBytes, String source) throws IOException {
        byte[] length = in.readNBytes(4);
        if (length.length < 4) {
            throw new EOFException("body cut short before its registrations");
        }
        int n = ByteBuffer.wrap(length).order(ByteOrder.LITTLE_ENDIAN).getInt();
        if (n < 0 || n > MAX_REGISTRATIONS_BYTES || n > maxBytes) {
            throw new IOException("registrations of " + Integer.toUnsignedString(n) + " bytes declared");
        }
        byte[] json = in.readNBytes(n);
        if (json.length < n) {
            throw new EOFException("body cut short in its registrations");
        }
        LinkedHashSet<RegisterRequest> registrations = new LinkedHashSet<>();
        try {
            JsonArray regs = new JsonObject(new String(json, StandardCharsets.UTF_8)).getJsonArray("registrations");
            if (regs == null) {
                throw new IOException("no registrations array");
            }
            for (int i = 0; i < regs.size(); i++) {
                if (!(regs.getValue(i) instanceof JsonObject o)) {
                    throw new IOException("registration " + i + " is not an object");
                }
                registrations.add(RegistrationJson.decode(o));
            }
        } catch (DecodeException | ClassCastException e) {
            throw new IOException("registrations are not JSON: " + e.getMessage());
        } catch (RegistrationJson.Invalid e) {
            throw new IOException("a registration is invalid: " + e.getMessage());
        }
        SnapshotCollector collector = new SnapshotCollector(source);
        SnapshotReader.read(in, maxBytes, collector);
        return new Contents(List.copyOf(registrations), collector.partitions());
    }

    /**
     * A cold start from the newest good snapshot: registers the workers it recorded (through {@code registrar}: in a
     * cluster, a registration the cluster holds differently wins and the recorded one is logged and left), installs
     * the blocks and watermarks of those registered here, and asks every stream's engine for what it published since.
     * Blocking; {@link RecoveryReport#NONE} when the directory holds no good snapshot.
     *
     * @param registered whether a worker is registered in a partition here: the blocks of any other are left out
     */
    public RecoveryReport recover(
            Registrar registrar,
            LocalRegistrar local,
            Integer fallbackBlockSize,
            BiPredicate<PartitionKey, Long> registered)
            throws IOException, InterruptedException {
        return recover(registrar, local, fallbackBlockSize, registered, worker -> {});
    }

    /**
     * As above; {@code withoutHistory} is told each worker the snapshot registered here but holds nothing of (no
     * watermark, no block): a sharded node serves those with an empty copy another node's may be worth more than.
     */
    public RecoveryReport recover(
            Registrar registrar,
            LocalRegistrar local,
            Integer fallbackBlockSize,
            BiPredicate<PartitionKey, Long> registered,
            LongConsumer withoutHistory)
            throws IOException, InterruptedException {
        long started = System.nanoTime();
        Optional<SnapshotFiles.Loaded<Contents>> found = load();
        if (found.isEmpty()) {
            LOG.info("no snapshot in the data directory {}; starting with an empty index", files.dir());
            return RecoveryReport.NONE;
        }
        SnapshotFiles.Loaded<Contents> loaded = found.get();
        for (RegisterRequest r : loaded.value().registrations()) {
            try {
                registrar.register(r).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                LOG.warn(
                        "registration of instance {} dp_rank {} from the data directory not restored: {}",
                        Long.toUnsignedString(r.workerId()),
                        r.dpRank(),
                        e.getCause() != null ? e.getCause().getMessage() : e.toString());
            }
        }
        // Blocks go back only for a worker registered here as recorded: one the cluster holds with another endpoint
        // is another engine process, whose history the snapshot does not describe.
        awaitAnnounced(loaded.value().registrations());
        Set<Long> asRecorded = new HashSet<>();
        Set<Long> otherwise = new HashSet<>();
        for (RegisterRequest r : loaded.value().registrations()) {
            (registry.registeredAs(r) ? asRecorded : otherwise).add(r.workerId());
        }
        asRecorded.removeAll(otherwise);
        SnapshotInstaller installer = new SnapshotInstaller(
                local,
                fallbackBlockSize,
                (key, worker) -> asRecorded.contains(worker) && registered.test(key, worker),
                true);
        RecoveryReport report = installer.installAll(
                "data-dir " + loaded.file().getFileName(), loaded.value().index(), started);
        Set<Long> recorded = recordedWorkers(loaded.value().index());
        for (RegisterRequest r : loaded.value().registrations()) {
            if (!recorded.contains(r.workerId())) {
                withoutHistory.accept(r.workerId());
            }
        }
        LOG.info(
                "recovered {} partitions, {} blocks and {} registrations from {} written {} ms before ({} ms)",
                report.partitions(),
                report.events(),
                loaded.value().registrations().size(),
                loaded.file(),
                System.currentTimeMillis() - loaded.createdMillis(),
                report.millis());
        return report;
    }

    /** Workers with a watermark or a block in any partition of a snapshot. */
    private static Set<Long> recordedWorkers(Map<PartitionKey, SnapshotCollector.Collected> index) {
        Set<Long> out = new HashSet<>();
        for (SnapshotCollector.Collected c : index.values()) {
            c.watermarks.forEach(w -> out.add(w.workerId()));
            c.events.forEach(e -> out.add(e.workerId()));
        }
        return out;
    }

    /**
     * The history of each instance in the newest good snapshot that is registered here as it was recorded, in a
     * partition of the recorded block size, one instance at a time, each to be installed with a replay from its
     * watermarks. Registers nothing: a node that joins ready nodes takes the registrations from the cluster. Blocking.
     */
    public List<InstanceHistory> histories() throws IOException {
        Optional<SnapshotFiles.Loaded<Contents>> found = load();
        if (found.isEmpty()) {
            LOG.info("no snapshot in the data directory {}: every shard's history comes from other nodes", files.dir());
            return List.of();
        }
        Contents contents = found.get().value();
        Set<Long> asRecorded = new HashSet<>();
        Set<Long> otherwise = new HashSet<>();
        for (RegisterRequest r : contents.registrations()) {
            (registry.registeredAs(r) ? asRecorded : otherwise).add(r.workerId());
        }
        asRecorded.removeAll(otherwise);
        List<InstanceHistory> out = new ArrayList<>();
        for (Map.Entry<PartitionKey, SnapshotCollector.Collected> e :
                contents.index().entrySet()) {
            PartitionKey key = e.getKey();
            SnapshotCollector.Collected c = e.getValue();
            Optional<PartitionRef> partition = registry.partition(key);
            if (partition.isEmpty() || partition.get().blockSize() != c.blockSize) {
                continue;
            }
            for (Map.Entry<Long, PeerSnapshot> w : c.byWorker().entrySet()) {
                long worker = w.getKey();
                if (asRecorded.contains(worker) && key.equals(registry.partitionOf(worker))) {
                    out.add(new InstanceHistory(key, worker, w.getValue().replayingAtInstall()));
                }
            }
        }
        LOG.info(
                "the data directory {} holds the history of {} instances registered in the cluster ({})",
                files.dir(),
                out.size(),
                found.get().file());
        return out;
    }

    /**
     * Waits a little for recorded registrations not registered here yet: in a cluster whose nodes restore at the same
     * moment, another node may have put one into the cluster's map just before this node tried (a refusal as a
     * duplicate), and this node applies it only when that node's announcement arrives.
     */
    private void awaitAnnounced(List<RegisterRequest> recorded) throws InterruptedException {
        long deadline = System.nanoTime() + ANNOUNCEMENT_WAIT.toNanos();
        while (System.nanoTime() - deadline < 0 && recorded.stream().anyMatch(r -> !registry.registeredAs(r))) {
            Thread.sleep(50);
        }
    }

    /** Why the node cannot keep its index on disk now, or null: a readiness check. */
    public String problem() {
        String error = lastError;
        return error == null ? null : "data directory " + files.dir() + " not writable: " + error;
    }

    public DataDirFigures figures() {
        SnapshotFiles.Written w = lastWrite;
        return new DataDirFigures(
                files.dir().toString(),
                writes.get(),
                failedWrites.get(),
                lastWriteEpochMillis,
                w == null ? 0 : w.bytes(),
                w == null ? 0 : w.millis(),
                lastError,
                rejectedFiles.get());
    }
}
