package dev.kvindexer.bench;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.sim.BlockChain;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.sim.KvCacheModel;
import dev.kvindexer.sim.TracePrompts.TraceRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A Mooncake trace prepared as Dynamo's {@code mooncake_bench} prepares it, before any clock runs: each request goes
 * to one of {@code workers} engines drawn from a seeded generator, each engine serves its requests in trace order
 * and publishes stores and removes, and every entry of each engine's timeline (its requests' queries and its events)
 * is placed between 0 and 1, so a window of any length replays it by scaling: by default each engine's own timeline
 * stretched to fill that span, as Dynamo does. The whole set of engines can be duplicated under new ids, each copy
 * replaying the same timeline (Dynamo's {@code -d}).
 *
 * <p>A request's tokens are Dynamo's synthesis: every token of trace block k is k, cut to {@code input_length}; the
 * local hash of each complete block of {@value #BLOCK_SIZE} tokens is what kvindexer's {@code /query} computes, and
 * the engine hash the rolling sequence hash of the locals. Engines are {@link KvCacheModel} device LRUs of
 * {@code capacity} blocks whose events are timed at the request that caused them, after its query.
 */
final class DynamoBenchSchedule {
    static final int BLOCK_SIZE = 512;

    final int uniqueWorkers;
    final int duplicates;
    final int requests;
    /** Each request's trace hash_ids and token count, for the tokens a caller synthesizes. */
    final long[][] hashIds;

    final int[] inputLength;

    /** Queries in issue order: position in the window (0..1), engine, request. */
    final double[] queryAt;

    final int[] queryWorker;
    final int[] queryRequest;
    /** Events in issue order: position in the window, engine, the one-event batch its engine publishes. */
    double[] eventAt;

    int[] eventWorker;
    EventBatch[] eventBatch;
    /** Seq of each engine's last batch, or -1 when it publishes none: what its watermark must reach. */
    final long[] lastSeq;
    /** Device blocks each unique engine holds at the end. */
    final long[] heldAtEnd;

    long storedEvents;
    long removedEvents;
    long storedBlocks;
    long removedBlocks;
    long queryBlocks;

    private DynamoBenchSchedule(int uniqueWorkers, int duplicates, int requests) {
        this.uniqueWorkers = uniqueWorkers;
        this.duplicates = duplicates;
        this.requests = requests;
        this.hashIds = new long[requests][];
        this.inputLength = new int[requests];
        this.heldAtEnd = new long[uniqueWorkers];
        this.lastSeq = new long[uniqueWorkers * duplicates];
        int n = requests * duplicates;
        this.queryAt = new double[n];
        this.queryWorker = new int[n];
        this.queryRequest = new int[n];
    }

    int workers() {
        return uniqueWorkers * duplicates;
    }

    long logicalOps() {
        return (long) requests * duplicates + storedEvents + removedEvents;
    }

    long blockOps() {
        return queryBlocks + storedBlocks + removedBlocks;
    }

    /** Fills {@code tokens} with request {@code r}'s synthesized prompt; returns its length. */
    int tokens(int r, int[] tokens) {
        long[] ids = hashIds[r];
        int length = inputLength[r];
        for (int b = 0; b * BLOCK_SIZE < length; b++) {
            Arrays.fill(tokens, b * BLOCK_SIZE, Math.min(length, (b + 1) * BLOCK_SIZE), (int) ids[b]);
        }
        return length;
    }

    int longestPrompt() {
        return Arrays.stream(inputLength).max().orElse(0);
    }

    /** One entry of an engine's timeline, before it is placed among all engines'. */
    private record Op(double at, long timestampMs, int worker, int ordinal, int request, EventBatch batch) {
        boolean isQuery() {
            return batch == null;
        }
    }

    /**
     * {@code perEngine}: each engine's timeline stretched over the whole window, first entry at 0 and last at 1, as
     * Dynamo's bench does (every engine then starts and ends together); otherwise the trace's own arrival times,
     * scaled as one.
     */
    static DynamoBenchSchedule prepare(
            Path trace, int workers, int duplicates, long seed, int capacity, boolean perEngine) throws IOException {
        List<TraceRequest> lines = new ArrayList<>();
        for (String line : Files.readAllLines(trace)) {
            if (!line.isBlank()) {
                lines.add(TraceRequest.parse(line));
            }
        }
        DynamoBenchSchedule s = new DynamoBenchSchedule(workers, duplicates, lines.size());
        KvCacheModel[] engines = new KvCacheModel[workers];
        List<List<Op>> timelines = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            // Block size 1 with placeholder tokens: the model only needs the hashes, and it keeps each block's tokens.
            engines[w] = new KvCacheModel(w, 0, 1, capacity, 0, "GPU", "CPU");
            timelines.add(new ArrayList<>());
        }
        SplittableRandom assign = new SplittableRandom(seed);
        int[] tokens = new int[0];
        int[] eventsOf = new int[workers];
        for (int r = 0; r < lines.size(); r++) {
            TraceRequest line = lines.get(r);
            // As Dynamo: input_length may name tokens past the trace's blocks; the prompt is what they provide.
            s.hashIds[r] = line.hashIds();
            s.inputLength[r] =
                    (int) Math.min(Math.max(line.inputLength(), 0), (long) line.hashIds().length * BLOCK_SIZE);
            if (tokens.length < s.inputLength[r]) {
                tokens = new int[s.inputLength[r]];
            }
            long[] local = BlockHasher.localHashes(tokens, s.tokens(r, tokens), BLOCK_SIZE, BlockHasher.BASE_SEED);
            long[] engineHashes = BlockHasher.sequenceHashes(local);
            s.queryBlocks += (long) local.length * duplicates;
            int w = assign.nextInt(workers);
            List<Op> timeline = timelines.get(w);
            timeline.add(new Op(0, line.timestampMs(), w, timeline.size(), r, null));
            if (local.length == 0) {
                continue;
            }
            int served = Math.min(local.length, capacity);
            for (EngineEvent ev : engines[w].admit(new BlockChain(1, new int[local.length], local, engineHashes))) {
                KvEvent event;
                if (ev instanceof EngineEvent.Store st) {
                    int from = served - st.blockHashes().length;
                    event = new KvEvent.Stored(
                            StorageTier.DEVICE,
                            st.parent() != null,
                            st.parent() == null ? 0 : st.parent(),
                            st.blockHashes(),
                            Arrays.copyOfRange(local, from, served));
                    s.storedEvents += duplicates;
                    s.storedBlocks += (long) st.blockHashes().length * duplicates;
                } else if (ev instanceof EngineEvent.Remove rm) {
                    event = new KvEvent.Removed(StorageTier.DEVICE, rm.blockHashes());
                    s.removedEvents += duplicates;
                    s.removedBlocks += (long) rm.blockHashes().length * duplicates;
                } else {
                    throw new IllegalStateException("the engine model published " + ev);
                }
                // One event a batch, as Dynamo's bench enqueues one RouterEvent at a time.
                EventBatch batch = new EventBatch(eventsOf[w]++, EventBatch.NO_RANK, List.of(event), 0, 0, 0);
                timeline.add(new Op(0, line.timestampMs(), w, timeline.size(), r, batch));
            }
        }
        for (int w = 0; w < workers; w++) {
            s.heldAtEnd[w] = engines[w].deviceBlocks();
        }

        long traceFirst = lines.get(0).timestampMs();
        long traceLast = lines.get(lines.size() - 1).timestampMs();
        List<Op> queries = new ArrayList<>();
        List<Op> events = new ArrayList<>();
        for (int d = 0; d < duplicates; d++) {
            for (int w = 0; w < workers; w++) {
                int id = w + d * workers;
                s.lastSeq[id] = eventsOf[w] - 1;
                List<Op> timeline = timelines.get(w);
                if (timeline.isEmpty()) {
                    continue;
                }
                long first = perEngine ? timeline.get(0).timestampMs() : traceFirst;
                long span = (perEngine ? timeline.get(timeline.size() - 1).timestampMs() : traceLast) - first;
                for (Op op : timeline) {
                    double at = span == 0 ? 0 : (double) (op.timestampMs() - first) / span;
                    Op placed = new Op(at, op.timestampMs(), id, op.ordinal(), op.request(), op.batch());
                    (placed.isQuery() ? queries : events).add(placed);
                }
            }
        }
        // Dynamo's issue order: deadline, engine, the engine's own order. (Its queries also go before events of the
        // same deadline; here callers and issuers are separate threads, so those race.)
        Comparator<Op> order =
                Comparator.comparingDouble(Op::at).thenComparingInt(Op::worker).thenComparingInt(Op::ordinal);
        queries.sort(order);
        events.sort(order);
        for (int i = 0; i < queries.size(); i++) {
            s.queryAt[i] = queries.get(i).at();
            s.queryWorker[i] = queries.get(i).worker();
            s.queryRequest[i] = queries.get(i).request();
        }
        s.eventAt = new double[events.size()];
        s.eventWorker = new int[events.size()];
        s.eventBatch = new EventBatch[events.size()];
        for (int i = 0; i < events.size(); i++) {
            s.eventAt[i] = events.get(i).at();
            s.eventWorker[i] = events.get(i).worker();
            s.eventBatch[i] = events.get(i).batch();
        }
        return s;
    }

    List<String> describe() {
        long held = Arrays.stream(heldAtEnd).sum() * duplicates;
        List<String> out = new ArrayList<>();
        out.add(String.format(
                "%,d trace requests x %d copies over %,d engines (%,d unique x %d), block size %d;"
                        + " %,d device blocks held at the end",
                requests, duplicates, workers(), uniqueWorkers, duplicates, BLOCK_SIZE, held));
        out.add(String.format(
                "logical ops %,d = %,d requests + %,d stored + %,d removed + 0 cleared events",
                logicalOps(), (long) requests * duplicates, storedEvents, removedEvents));
        out.add(String.format(
                "block ops %,d = %,d query hashes + %,d stored + %,d removed hashes",
                blockOps(), queryBlocks, storedBlocks, removedBlocks));
        return out;
    }
}
