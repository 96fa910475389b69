package dev.kvindexer.bench;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.hash.LocalHashes;
import dev.kvindexer.index.TierBreakdown;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PartitionStats;
import dev.kvindexer.partition.QueryResult;
import dev.kvindexer.partition.StreamId;
import dev.kvindexer.partition.StreamSpec;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * One cell of the replay: a fresh partition, the schedule issued over a window at its deadlines without waiting for
 * anything issued before, the time until every query and every event has completed, and the index checked against
 * the engines afterwards.
 *
 * <p>Events enter the way the ZMQ listener hands decoded batches over ({@link PartitionRef#applyLive}, one issuer
 * thread per group of engines, each engine's batches in order); queries take the path of the Dynamo-flavor
 * {@code /query} route (the partition looked up in the registry, the prompt hashed on the calling thread, the
 * partition asked, the answer's breakdown built), from caller threads that each own the engines {@code id % callers}.
 * The route's JSON rendering and HTTP are left out, as Dynamo's bench calls its indexer in process.
 */
final class DynamoBenchRun {
    /** The stream generation every engine's batches carry, as its listener's would. */
    private static final long GENERATION = 1;
    /** The clock starts this long after the threads are released, so none begins late. */
    static final long LEAD_NANOS = 20_000_000L;
    /** How long the compiler must have finished nothing before a cell starts. */
    private static final long COMPILER_IDLE_NANOS = 200_000_000L;

    /**
     * {@code answer}: build the route's answer from the match (its owners as records and their tier breakdown, what
     * the JSON is rendered from); without it a query ends at the partition's reply, as Dynamo's find_matches does.
     * {@code prepared}: each query's hashes computed before the replay, as Dynamo's bench prepares them.
     * {@code noop}: nothing is queried or applied, only the deadlines kept: what the replay itself costs on this
     * machine, the floor under any indexer measured by it (Dynamo validates its harness with a no-op pipeline too).
     */
    record Config(
            int threads, int callers, int issuers, long spinNanos, boolean answer, boolean prepared, boolean noop) {}

    /** What a cell measured; times in nanoseconds from its start, latencies in nanoseconds. */
    record Result(
            long windowNanos,
            long elapsedNanos,
            long issueSpanNanos,
            long drainNanos,
            long[] scheduledToCompletion,
            long[] service,
            long[] queueWait,
            long[] eventIssueLag,
            long cpuNanos,
            Map<String, Long> cpuByThread,
            long queriesDoneNanos,
            long eventsDoneNanos,
            long collections,
            long collectionMillis) {
        boolean generatorValid() {
            return issueSpanNanos <= windowNanos * 101 / 100;
        }

        /** Dynamo's keep-up rule: replay and drain end within 1.10 times the window. */
        boolean keptUp() {
            return generatorValid() && elapsedNanos <= windowNanos * 110 / 100;
        }
    }

    private DynamoBenchRun() {}

    private static long engineId(int worker) {
        return worker + 1L; // instance ids start at 1, as registered engines' do
    }

    /** The node every cell runs on, as {@code serve} starts it with {@code threads} event loops. */
    static IndexerNode startNode(Config settings) throws Exception {
        return IndexerNode.start(new ServeConfig(
                "127.0.0.1", 0, settings.threads(), 1, List.of(), null, "default", "default", List.of(), false, 0));
    }

    /**
     * Runs one cell on a partition of its own (model {@code model}), so that it starts from an empty index; the
     * partition's blocks are dropped after. The node is shared by every cell: a node started per cell would make the
     * JIT drop compiled code at each start and compile it again during the cell.
     */
    static Result run(IndexerNode node, String model, DynamoBenchSchedule s, long windowMs, Config settings)
            throws Exception {
        PartitionKey key = new PartitionKey(model, PartitionKey.DEFAULT);
        PartitionRef partition = await(node.registrations().ensurePartition(key, DynamoBenchSchedule.BLOCK_SIZE));
        try {
            return run(node, key, partition, s, windowMs * 1_000_000L, settings);
        } finally {
            List<Future<Void>> dropped = new ArrayList<>();
            for (int w = 0; w < s.workers(); w++) {
                dropped.add(partition.removeStreams(engineId(w), -1, true));
            }
            await(Future.all(dropped));
        }
    }

    private static Result run(
            IndexerNode node,
            PartitionKey key,
            PartitionRef partition,
            DynamoBenchSchedule s,
            long windowNanos,
            Config settings)
            throws Exception {
        // Every stream opens before the clock, as a registration opens its listener's; Dynamo registers every rank
        // before timing too.
        List<Future<Void>> opened = new ArrayList<>();
        for (int w = 0; w < s.workers(); w++) {
            opened.add(partition.openStream(new StreamSpec(engineId(w), 0, GENERATION, null)));
        }
        await(Future.all(opened));

        long storedBefore = node.counters().appliedCount("stored", "ok");
        long removedBefore = node.counters().appliedCount("removed", "ok");
        Map<String, Long> warningsBefore = node.counters().warningSnapshot();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch ready = new CountDownLatch(settings.callers());
        long[] start = new long[1];
        List<Issuer> issuers = new ArrayList<>();
        for (int i = 0; i < settings.issuers(); i++) {
            issuers.add(new Issuer(s, partition, eventsOf(s, i, settings.issuers()), windowNanos, settings, go, start));
        }
        List<Caller> callers = new ArrayList<>();
        for (int c = 0; c < settings.callers(); c++) {
            callers.add(new Caller(
                    s,
                    node.registry(),
                    key,
                    queriesOf(s, c, settings.callers()),
                    windowNanos,
                    settings,
                    ready,
                    go,
                    start));
        }
        List<Thread> threads = new ArrayList<>();
        issuers.forEach(it -> threads.add(thread("dynamo-bench-issuer", it, failure)));
        callers.forEach(it -> threads.add(thread("dynamo-bench-caller", it, failure)));
        threads.forEach(Thread::start);
        await(ready);
        // Each cell starts on a settled heap, so none pays for its predecessor's garbage, and once the compiler is
        // idle, so that what the harness set it compiling (the last cell's statistics, this one's preparation) does
        // not run inside the cell.
        System.gc();
        awaitCompilerIdle();
        long cpuBefore = processCpuNanos();
        long[] gcBefore = collections();
        Map<Long, Long> threadCpuBefore = threadCpuNanos();
        start[0] = System.nanoTime() + LEAD_NANOS;
        go.countDown();

        for (int i = 0; i < issuers.size(); i++) {
            threads.get(i).join();
        }
        long eventsDone = settings.noop()
                ? issuers.stream().mapToLong(i -> i.lastIssued).max().orElse(start[0])
                : awaitEvents(node, key, s, start[0], windowNanos, failure);
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("the replay failed", failure.get());
        }
        long lastQueryDue = 0;
        long lastQueryDone = 0;
        for (Caller c : callers) {
            lastQueryDue = Math.max(lastQueryDue, c.lastDue);
            lastQueryDone = Math.max(lastQueryDone, c.lastDone);
        }
        long lastEventIssued = 0;
        for (Issuer i : issuers) {
            lastEventIssued = Math.max(lastEventIssued, i.lastIssued);
        }
        // Queries are accepted at their deadline (each caller is its own lane); events when applyLive returned.
        long producerStop = Math.max(lastQueryDue, lastEventIssued);
        long end = Math.max(eventsDone, lastQueryDone);
        long cpu = processCpuNanos() - cpuBefore;
        Map<String, Long> cpuByThread = cpuByThreadName(threadCpuBefore);
        // The replay's threads have ended, so they are not among the live threads counted above.
        cpuByThread.put(
                "dynamo-bench-issuer",
                issuers.stream().mapToLong(i -> i.cpuNanos).sum());
        cpuByThread.put(
                "dynamo-bench-caller",
                callers.stream().mapToLong(c -> c.cpuNanos).sum());
        long[] gc = collections();
        if (!settings.noop()) {
            check(node, partition, s, storedBefore, removedBefore, warningsBefore);
        }
        return new Result(
                windowNanos,
                end - start[0],
                producerStop - start[0],
                Math.max(0, end - producerStop),
                concat(callers, c -> c.scheduledToCompletion),
                concat(callers, c -> c.service),
                concat(callers, c -> c.queueWait),
                issuers.stream().flatMapToLong(i -> Arrays.stream(i.lag)).toArray(),
                cpu,
                cpuByThread,
                lastQueryDone - start[0],
                eventsDone - start[0],
                gc[0] - gcBefore[0],
                gc[1] - gcBefore[1]);
    }

    /** The collections so far and the milliseconds they took, every collector together. */
    private static long[] collections() {
        long count = 0;
        long millis = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            millis += Math.max(0, gc.getCollectionTime());
        }
        return new long[] {count, millis};
    }

    private static Map<Long, Long> threadCpuNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<Long, Long> out = new HashMap<>();
        for (long id : threads.getAllThreadIds()) {
            out.put(id, threads.getThreadCpuTime(id));
        }
        return out;
    }

    /** The CPU each group of threads (a name without its digits) used since {@code before}. */
    private static Map<String, Long> cpuByThreadName(Map<Long, Long> before) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<String, Long> out = new TreeMap<>();
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info == null) {
                continue;
            }
            long now = threads.getThreadCpuTime(info.getThreadId());
            long used = now - before.getOrDefault(info.getThreadId(), 0L);
            if (now >= 0 && used > 0) {
                out.merge(info.getThreadName().replaceAll("[0-9]+", "#"), used, Long::sum);
            }
        }
        return out;
    }

    /** The CPU time of every thread of this process so far: the node's, the issuers', the callers' and the JVM's. */
    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** Events of the engines in issuer {@code i}'s contiguous group, in issue order. */
    private static int[] eventsOf(DynamoBenchSchedule s, int i, int issuers) {
        return IntStream.range(0, s.eventAt.length)
                .filter(e -> (int) ((long) s.eventWorker[e] * issuers / s.workers()) == i)
                .toArray();
    }

    /** Queries of the engines {@code id % callers == c}, in issue order (Dynamo's query lanes). */
    private static int[] queriesOf(DynamoBenchSchedule s, int c, int callers) {
        return IntStream.range(0, s.queryAt.length)
                .filter(q -> s.queryWorker[q] % callers == c)
                .toArray();
    }

    /**
     * When every engine's watermark (the seq its partition applied last, advanced after the batch applied) has
     * reached its last batch. Polled, not spun: a spinning poller would take a core from the partition it waits on;
     * the poll interval bounds how late the completion is seen.
     */
    private static long awaitEvents(
            IndexerNode node,
            PartitionKey key,
            DynamoBenchSchedule s,
            long start,
            long windowNanos,
            AtomicReference<Throwable> failure) {
        List<Watermarks.Watermark> marks = new ArrayList<>();
        List<Long> last = new ArrayList<>();
        for (int w = 0; w < s.workers(); w++) {
            if (s.lastSeq[w] >= 0) {
                marks.add(node.watermarks().of(new StreamId(key, engineId(w), 0)));
                last.add(s.lastSeq[w]);
            }
        }
        long giveUp = start + 20 * windowNanos + 60_000_000_000L;
        int next = 0;
        while (true) {
            while (next < marks.size()
                    && marks.get(next).isSet()
                    && marks.get(next).seq() == last.get(next)) {
                next++;
            }
            long now = System.nanoTime();
            if (next == marks.size()) {
                return now;
            }
            if (failure.get() != null || now > giveUp) {
                throw new IllegalStateException(
                        "events not all applied: " + node.counters().appliedSnapshot() + " "
                                + node.counters().warningSnapshot());
            }
            LockSupport.parkNanos(100_000);
        }
    }

    /**
     * Fails loudly unless the partition holds exactly what the engines hold, engine by engine, and every event applied
     * without a warning. The stats request queues behind everything sent before it.
     */
    private static void check(
            IndexerNode node,
            PartitionRef partition,
            DynamoBenchSchedule s,
            long storedBefore,
            long removedBefore,
            Map<String, Long> warningsBefore)
            throws Exception {
        EventCounters counters = node.counters();
        long stored = counters.appliedCount("stored", "ok") - storedBefore;
        long removed = counters.appliedCount("removed", "ok") - removedBefore;
        if (stored != s.storedEvents
                || removed != s.removedEvents
                || !counters.warningSnapshot().equals(warningsBefore)) {
            throw new IllegalStateException("applied " + counters.appliedSnapshot() + ", warnings "
                    + counters.warningSnapshot() + "; expected " + s.storedEvents + " stored and " + s.removedEvents
                    + " removed more, all ok, and no new warning");
        }
        PartitionStats stats = await(partition.stats());
        long held = stats.heldPerTier()[StorageTier.DEVICE.ordinal()];
        long expected = Arrays.stream(s.heldAtEnd).sum() * s.duplicates;
        if (held != expected) {
            throw new IllegalStateException("the index holds " + held + " device blocks, the engines " + expected);
        }
        for (PartitionStats.Engine e : stats.engines()) {
            long engineHeld = e.heldPerTier()[StorageTier.DEVICE.ordinal()];
            long engineExpected = s.heldAtEnd[(int) ((e.workerId() - 1) % s.uniqueWorkers)];
            if (engineHeld != engineExpected) {
                throw new IllegalStateException("engine " + e.workerId() + ": the index holds " + engineHeld
                        + " device blocks, the engine " + engineExpected);
            }
        }
    }

    private static <T> T await(Future<T> f) throws Exception {
        return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    }

    private static Thread thread(String name, Runnable body, AtomicReference<Throwable> failure) {
        Thread t = new Thread(
                () -> {
                    try {
                        body.run();
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                },
                name);
        t.setDaemon(true);
        return t;
    }

    /** The CPU the calling thread has used. */
    private static long ownCpuNanos() {
        return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }

    private static long[] concat(List<Caller> callers, Function<Caller, long[]> of) {
        return callers.stream().flatMapToLong(c -> Arrays.stream(of.apply(c))).toArray();
    }

    /**
     * Sleeps until {@code due} (nanoTime), then spins the last {@code spinNanos}. Without spin the wake-up is the
     * timer's (tens of microseconds late), which shows as queue wait and issue lag: on two cores, threads spinning
     * before every deadline would take the CPU from the node they measure.
     */
    private static void waitUntil(long due, long spinNanos) {
        long now = System.nanoTime();
        while (due - now > spinNanos) {
            LockSupport.parkNanos(due - now - spinNanos);
            now = System.nanoTime();
        }
        while (now < due) {
            Thread.onSpinWait();
            now = System.nanoTime();
        }
    }

    /** Publishes one group of engines' batches at their deadlines, as a listener hands decoded batches over. */
    private static final class Issuer implements Runnable {
        private final DynamoBenchSchedule s;
        private final PartitionRef partition;
        private final int[] events;
        private final long windowNanos;
        private final Config settings;
        private final CountDownLatch go;
        private final long[] start;
        final long[] lag;
        long lastIssued;
        /** CPU this thread used from the start of the replay to its end. */
        long cpuNanos;

        Issuer(
                DynamoBenchSchedule s,
                PartitionRef partition,
                int[] events,
                long windowNanos,
                Config settings,
                CountDownLatch go,
                long[] start) {
            this.s = s;
            this.partition = partition;
            this.events = events;
            this.windowNanos = windowNanos;
            this.settings = settings;
            this.go = go;
            this.start = start;
            this.lag = new long[events.length];
        }

        @Override
        public void run() {
            await(go);
            long cpuAtStart = ownCpuNanos();
            long t0 = start[0];
            for (int k = 0; k < events.length; k++) {
                int e = events[k];
                long due = t0 + (long) (s.eventAt[e] * windowNanos);
                waitUntil(due, settings.spinNanos());
                if (!settings.noop()) {
                    partition.applyLive(engineId(s.eventWorker[e]), 0, GENERATION, s.eventBatch[e], 0);
                }
                lastIssued = System.nanoTime();
                lag[k] = lastIssued - due;
            }
            cpuNanos = ownCpuNanos() - cpuAtStart;
        }
    }

    /** One query lane: its engines' queries, each at its deadline, one after another as a route handler runs them. */
    private static final class Caller implements Runnable {
        private final DynamoBenchSchedule s;
        private final Registry registry;
        private final PartitionKey key;
        private final int[] queries;
        private final long windowNanos;
        private final Config settings;
        private final CountDownLatch ready;
        private final CountDownLatch go;
        private final long[] start;
        final long[] scheduledToCompletion;
        final long[] service;
        final long[] queueWait;
        long lastDue;
        long lastDone;
        /** CPU this thread used from the start of the replay to its end (its preparation left out). */
        long cpuNanos;
        /** Kept in a field, so the answers are used and the JIT cannot drop the work that built them. */
        long sink;

        Caller(
                DynamoBenchSchedule s,
                Registry registry,
                PartitionKey key,
                int[] queries,
                long windowNanos,
                Config settings,
                CountDownLatch ready,
                CountDownLatch go,
                long[] start) {
            this.s = s;
            this.ready = ready;
            this.registry = registry;
            this.key = key;
            this.queries = queries;
            this.windowNanos = windowNanos;
            this.settings = settings;
            this.go = go;
            this.start = start;
            this.scheduledToCompletion = new long[queries.length];
            this.service = new long[queries.length];
            this.queueWait = new long[queries.length];
        }

        @Override
        public void run() {
            int[] tokens = new int[s.longestPrompt()];
            long seed = BlockHasher.seedFor(null, null);
            long[][] prepared = new long[queries.length][];
            if (settings.prepared()) {
                for (int k = 0; k < queries.length; k++) {
                    int length = s.tokens(s.queryRequest[queries[k]], tokens);
                    prepared[k] = BlockHasher.localHashes(tokens, length, DynamoBenchSchedule.BLOCK_SIZE, seed);
                }
            }
            ready.countDown();
            await(go);
            long cpuAtStart = ownCpuNanos();
            long t0 = start[0];
            for (int k = 0; k < queries.length; k++) {
                int q = queries[k];
                // The request body: synthesized before its deadline when the lane is idle, as a client sends it.
                int length = settings.prepared() ? 0 : s.tokens(s.queryRequest[q], tokens);
                long due = t0 + (long) (s.queryAt[q] * windowNanos);
                waitUntil(due, settings.spinNanos());
                long began = System.nanoTime();
                if (!settings.noop()) {
                    PartitionRef partition = registry.partition(key).orElseThrow();
                    // As the route hashes: each block when the walk reaches it, so hashing is inside the call.
                    LocalHashes hashes = settings.prepared()
                            ? LocalHashes.of(prepared[k])
                            : LocalHashes.ofTokens(tokens, length, partition.blockSize(), seed);
                    QueryResult r = partition
                            .query(hashes)
                            .toCompletionStage()
                            .toCompletableFuture()
                            .join();
                    sink += settings.answer()
                            ? TierBreakdown.of(r.owners(), r.blockSize()).instanceCount()
                            : r.owners().size();
                }
                long done = System.nanoTime();
                scheduledToCompletion[k] = done - due;
                service[k] = done - began;
                queueWait[k] = began - due;
                lastDue = due;
                lastDone = done;
            }
            cpuNanos = ownCpuNanos() - cpuAtStart;
        }
    }

    /**
     * Returns once the JIT has finished no compilation for {@link #COMPILER_IDLE_NANOS} (or after five seconds): its
     * total time moves only when a compilation ends.
     */
    private static void awaitCompilerIdle() throws InterruptedException {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return;
        }
        long giveUp = System.nanoTime() + 5_000_000_000L;
        long total = jit.getTotalCompilationTime();
        long idleSince = System.nanoTime();
        while (System.nanoTime() - giveUp < 0 && System.nanoTime() - idleSince < COMPILER_IDLE_NANOS) {
            Thread.sleep(10);
            long now = jit.getTotalCompilationTime();
            if (now != total) {
                total = now;
                idleSince = System.nanoTime();
            }
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
