package dev.kvindexer.cluster;

import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.index.TieredMatch;
import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.partition.MergedPartition;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PartitionView;
import dev.kvindexer.partition.PeerSnapshot;
import dev.kvindexer.partition.PromptHashes;
import dev.kvindexer.partition.QueryResult;
import dev.kvindexer.partition.TieredQueryResult;
import dev.kvindexer.partition.TracedPartition;
import dev.kvindexer.recovery.SnapshotCollector;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.spi.cluster.ClusterManager;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Queries of sharded partitions across the cluster. Each node answers, on its own event-bus address, for the instances
 * it holds; a query on any node takes its own instances from its partition and asks, for every other instance, one
 * holder of its shard (Hazelcast's replicas in order, then any other member), moving on to the next when a holder fails,
 * times out or does not hold the instance. The merged answer is what one node holding everything would give; an
 * instance no live node holds is counted as missing, never answered as a miss.
 */
public final class ShardQueries {
    private static final Logger LOG = LoggerFactory.getLogger(ShardQueries.class);
    static final String ADDRESS_PREFIX = "kvindexer.shard.query.";
    static final String REJECTED_SOURCE = "shard_queries";
    /** Seal domains of the two kinds of request between nodes. */
    static final String QUERY = "shard.query";

    static final String SNAPSHOT = "shard.snapshot";

    private final Vertx vertx;
    private final ClusterManager manager;
    private final Registry registry;
    private final ShardPlacement placement;
    private final ClusterCounters counters;
    private final DeliveryOptions options;
    private final DeliveryOptions snapshotOptions;
    private final long maxSnapshotBytes;
    private final ShardSeal seal;
    private final Spans spans;
    private MessageConsumer<Buffer> consumer;

    /**
     * {@code timeout} bounds one holder's answer to a query; {@code snapshotTimeout} and {@code maxSnapshotBytes} an
     * instance's snapshot taken from another node, as for recovery from peers. With {@code authToken} every message
     * between nodes is sealed with it ({@link ShardSeal}). Each node a query asks is a span of {@code spans}.
     */
    public ShardQueries(
            Vertx vertx,
            ClusterManager manager,
            Registry registry,
            ShardPlacement placement,
            ClusterCounters counters,
            Duration timeout,
            Duration snapshotTimeout,
            long maxSnapshotBytes,
            String authToken,
            Spans spans) {
        this.vertx = vertx;
        this.manager = manager;
        this.registry = registry;
        this.placement = placement;
        this.counters = counters;
        this.options = new DeliveryOptions().setSendTimeout(timeout.toMillis());
        this.snapshotOptions = new DeliveryOptions().setSendTimeout(snapshotTimeout.toMillis());
        this.maxSnapshotBytes = maxSnapshotBytes;
        this.seal = new ShardSeal(authToken);
        this.spans = spans;
    }

    /** The largest message a node's event bus takes from another ({@link BusFrameGuard#limit}). */
    int maxMessageBytes() {
        return BusFrameGuard.limit(maxSnapshotBytes, Runtime.getRuntime().maxMemory());
    }

    /** Starts answering other nodes' questions for the instances this node holds. */
    public Future<Void> start() {
        consumer = vertx.eventBus().consumer(ADDRESS_PREFIX + manager.getNodeId(), this::answer);
        return consumer.completion();
    }

    public Future<Void> stop() {
        return consumer == null ? Future.succeededFuture() : consumer.unregister();
    }

    /** The handle callers get for a partition this node hosts: its queries cover every instance of the cluster. */
    public PartitionRef view(PartitionRef hosted) {
        return new ScatteredPartition(hosted, this);
    }

    /**
     * Another node's request, checked: its seal, then its bytes. A refused one is failed back (401, 400), counted,
     * and null is returned.
     */
    ShardQueryCodec.Request receive(String kind, Message<Buffer> msg) {
        try {
            return ShardQueryCodec.decodeRequest(seal.openRequest(kind, msg.body()));
        } catch (SecurityException e) {
            counters.rejected(REJECTED_SOURCE, e.getMessage());
            msg.fail(401, "shard request refused: " + e.getMessage());
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            rejected();
            msg.fail(400, "malformed shard request: " + e.getMessage());
        }
        return null;
    }

    /** Answers a request received with {@link #receive}, sealed to it. */
    void reply(String kind, Message<Buffer> msg, Buffer body) {
        msg.reply(seal.reply(kind, msg.body(), body));
    }

    /** Sends a request to another node; the reply's seal and bytes are checked before it is handed on. */
    private Future<Buffer> request(String kind, String address, Buffer body, DeliveryOptions deliveryOptions) {
        Buffer sealed = seal.request(kind, body);
        Future<Message<Buffer>> asked = spans.on()
                ? spans.around(
                        kind,
                        t -> t.put("kvindexer.node", address.substring(address.lastIndexOf('.') + 1)),
                        () -> vertx.eventBus().<Buffer>request(address, sealed, deliveryOptions))
                : vertx.eventBus().<Buffer>request(address, sealed, deliveryOptions);
        return asked.map(reply -> seal.openReply(kind, sealed, reply.body())).onFailure(t -> {
            if (t instanceof SecurityException) {
                counters.rejected(REJECTED_SOURCE, t.getMessage());
            }
        });
    }

    private void answer(Message<Buffer> msg) {
        ShardQueryCodec.Request request = receive(QUERY, msg);
        if (request == null) {
            return;
        }
        PartitionRef partition = registry.partition(request.key()).orElse(null);
        boolean history = request.kind() == ShardQueryCodec.HISTORY;
        Set<Long> served = new HashSet<>();
        for (long w : request.workers()) {
            if (request.key().equals(registry.partitionOf(w))
                    && (history ? registry.servesWithHistory(w) : registry.servesHere(w))) {
                served.add(w);
            }
        }
        long[] ids = served.stream().mapToLong(Long::longValue).toArray();
        if (partition == null || served.isEmpty() || history) {
            reply(
                    QUERY,
                    msg,
                    request.kind() == ShardQueryCodec.TIERED
                            ? ShardQueryCodec.encode(new ShardQueryCodec.TieredReply(0, ids, EMPTY_TIERED))
                            : ShardQueryCodec.encode(new ShardQueryCodec.Reply(0, ids, List.of(), new int[2])));
            return;
        }
        PartitionRef hosted = spans.on()
                ? new TracedPartition(PartitionView.hostedOf(partition), spans)
                : PartitionView.hostedOf(partition);
        Future<Buffer> reply = request.kind() == ShardQueryCodec.TIERED
                ? hosted.queryTiered(request.hashes())
                        .map(r -> ShardQueryCodec.encode(new ShardQueryCodec.TieredReply(
                                r.blockSize(), ids, ShardGather.only(r.match(), served))))
                : localQuery(hosted, request.kind(), request.hashes())
                        .map(r -> ShardQueryCodec.encode(new ShardQueryCodec.Reply(
                                r.blockSize(), ids, ShardGather.only(r.matches(), served), r.sharedReach())));
        reply.onComplete(ar -> {
            if (ar.succeeded()) {
                reply(QUERY, msg, ar.result());
            } else {
                msg.fail(500, String.valueOf(ar.cause().getMessage()));
            }
        });
    }

    /**
     * An instance's exact snapshot from the first of {@code candidates} that serves it (see {@link ShardHandover}),
     * or a failure when none does.
     */
    Future<PeerSnapshot> snapshot(PartitionKey key, long worker, ArrayDeque<String> candidates) {
        return snapshot(key, worker, candidates, false);
    }

    /** As above; with {@code withHistory} only from a node that serves the instance with its history. */
    Future<PeerSnapshot> snapshot(PartitionKey key, long worker, ArrayDeque<String> candidates, boolean withHistory) {
        String node = candidates.poll();
        if (node == null) {
            return Future.failedFuture("no live node serves instance " + Long.toUnsignedString(worker));
        }
        Buffer request = ShardQueryCodec.encode(
                new ShardQueryCodec.Request(key, ShardQueryCodec.LOCAL, new long[0], new long[] {worker}));
        // Asked first within a query's timeout: a dead node would otherwise hold the transfer for its whole timeout.
        return (withHistory ? servesWithHistory(node, key, worker) : serves(node, key, worker))
                .otherwise(false)
                .compose(yes -> !yes
                        ? snapshot(key, worker, candidates, withHistory)
                        : request(SNAPSHOT, ShardHandover.ADDRESS_PREFIX + node, request, snapshotOptions)
                                .compose(reply -> vertx.<PeerSnapshot>executeBlocking(
                                        () -> parse("node " + node, key, reply), false))
                                .recover(t -> {
                                    LOG.debug(
                                            "node {} gave no snapshot of instance {}: {}",
                                            node,
                                            Long.toUnsignedString(worker),
                                            t.toString());
                                    return snapshot(key, worker, candidates, withHistory);
                                }));
    }

    /** A snapshot document of one partition section, as /dump sends it and a peer reads it. */
    static Buffer document(PartitionKey key, int blockSize, byte[] payload) {
        return Buffer.buffer(SnapshotWriter.document(key, blockSize, payload));
    }

    private PeerSnapshot parse(String source, PartitionKey key, Buffer document) throws IOException {
        return SnapshotCollector.exactSection(source, key, document.getBytes(), maxSnapshotBytes);
    }

    /**
     * The whole partition as one node holding every instance would hold it: this node's instances from its own
     * partition, every other from a node that serves it. An instance no live node serves is left out, logged, counted
     * and named in the result.
     */
    Future<MergedPartition> whole(PartitionRef hosted) {
        PartitionKey key = hosted.key();
        Instances split = instances(key);
        List<Future<PeerSnapshot>> parts = new ArrayList<>();
        parts.add(hosted.snapshotOf(
                        split.here().stream().mapToLong(Long::longValue).toArray())
                .compose(payload -> vertx.<PeerSnapshot>executeBlocking(
                        () -> parse("this node", key, document(key, hosted.blockSize(), payload)), false)));
        List<Long> missing = new ArrayList<>();
        for (long w : split.elsewhere()) {
            parts.add(snapshot(key, w, placement.askOrder(key, w, manager.getNodes(), manager.getNodeId()))
                    .recover(t -> {
                        LOG.warn(
                                "the dump of {} leaves out instance {}: {}",
                                key.dumpKey(),
                                Long.toUnsignedString(w),
                                t.getMessage());
                        synchronized (missing) {
                            missing.add(w);
                        }
                        counters.missingInstances(1);
                        return Future.succeededFuture(null);
                    }));
        }
        return Future.all(parts)
                .compose(all -> vertx.executeBlocking(
                        () -> {
                            List<PeerSnapshot.Event> events = new ArrayList<>();
                            List<PeerSnapshot.StreamWatermark> watermarks = new ArrayList<>();
                            for (Future<PeerSnapshot> f : parts) {
                                if (f.result() != null) {
                                    events.addAll(f.result().events());
                                    watermarks.addAll(f.result().watermarks());
                                }
                            }
                            long[] lacking;
                            synchronized (missing) {
                                lacking = missing.stream()
                                        .mapToLong(Long::longValue)
                                        .toArray();
                            }
                            return new MergedPartition(
                                    key, hosted.blockSize(), new PeerSnapshot(events, watermarks, true), lacking);
                        },
                        false));
    }

    /** A message from another member was malformed. */
    void rejected() {
        counters.rejected(REJECTED_SOURCE, "invalid");
    }

    /** Whether {@code node} serves the instance (holds it since registration); fails when it cannot be asked. */
    Future<Boolean> serves(String node, PartitionKey key, long workerId) {
        return served(node, key, workerId, ShardQueryCodec.LOCAL);
    }

    /**
     * Whether {@code node} serves the instance with its history, not only what it applied since a cold start that
     * found nothing of it; fails when it cannot be asked.
     */
    Future<Boolean> servesWithHistory(String node, PartitionKey key, long workerId) {
        return served(node, key, workerId, ShardQueryCodec.HISTORY);
    }

    private Future<Boolean> served(String node, PartitionKey key, long workerId, int kind) {
        Buffer request =
                ShardQueryCodec.encode(new ShardQueryCodec.Request(key, kind, new long[0], new long[] {workerId}));
        return request(QUERY, ADDRESS_PREFIX + node, request, options).map(reply -> {
            for (long w : ShardQueryCodec.decodeReply(reply).served()) {
                if (w == workerId) {
                    return true;
                }
            }
            return false;
        });
    }

    /** A shard whose every holder was lost is being rebuilt here from its engine. */
    void rebuilt() {
        counters.shardRebuilt();
    }

    private static Future<QueryResult> localQuery(PartitionRef hosted, int kind, long[] hashes) {
        return hosted.query(ShardQueryCodec.hashesOf(kind), hashes);
    }

    private static final TieredMatch EMPTY_TIERED =
            new TieredMatch(new TieredMatch.Owners(new long[0], new int[0], new int[0]), List.of());

    /** A query of {@code hosted}'s partition over every instance registered in the cluster. */
    Future<QueryResult> query(PartitionRef hosted, PromptHashes hashKind, long[] hashes) {
        int kind = ShardQueryCodec.kindOf(hashKind);
        return scatter(
                hosted,
                kind,
                hashes,
                mine -> localQuery(hosted, kind, hashes).map(r -> new ShardGather.Query(r, mine)));
    }

    /** A tier-by-tier query (Dynamo's remote indexer) over every instance registered in the cluster. */
    Future<TieredQueryResult> queryTiered(PartitionRef hosted, long[] hashes) {
        return scatter(
                hosted,
                ShardQueryCodec.TIERED,
                hashes,
                mine -> hosted.queryTiered(hashes).map(r -> new ShardGather.Tiered(r, mine)));
    }

    /**
     * This node's instances from {@code local}, every other instance from one holder of its shard, in rounds: each
     * unanswered instance goes to its next candidate until it is answered or no candidate is left (missing).
     */
    private <R> Future<R> scatter(
            PartitionRef hosted, int kind, long[] hashes, Function<Set<Long>, Future<ShardGather<R>>> local) {
        PartitionKey key = hosted.key();
        Instances split = instances(key);
        Map<Long, ArrayDeque<String>> candidates = new LinkedHashMap<>();
        List<String> nodes = manager.getNodes();
        for (long w : split.elsewhere()) {
            candidates.put(w, placement.askOrder(key, w, nodes, manager.getNodeId()));
        }
        if (!candidates.isEmpty()) {
            counters.scattered();
        }
        return local.apply(split.here()).compose(gather -> ask(key, kind, hashes, candidates, gather));
    }

    /** A partition's registered instances: those this node serves, and the others. */
    private record Instances(Set<Long> here, List<Long> elsewhere) {}

    private Instances instances(PartitionKey key) {
        Set<Long> here = new HashSet<>();
        List<Long> elsewhere = new ArrayList<>();
        for (Registry.Member m : registry.members(key)) {
            if (registry.servesHere(m.workerId())) {
                here.add(m.workerId());
            } else {
                elsewhere.add(m.workerId());
            }
        }
        return new Instances(here, elsewhere);
    }

    private <R> Future<R> ask(
            PartitionKey key,
            int kind,
            long[] hashes,
            Map<Long, ArrayDeque<String>> candidates,
            ShardGather<R> gather) {
        Map<String, List<Long>> byNode = new HashMap<>();
        for (var it = candidates.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            String node = e.getValue().poll();
            if (node == null) {
                gather.missing();
                counters.missingInstances(1);
                it.remove();
            } else {
                byNode.computeIfAbsent(node, n -> new ArrayList<>()).add(e.getKey());
            }
        }
        if (byNode.isEmpty()) {
            return Future.succeededFuture(gather.result());
        }
        List<Future<Void>> replies = new ArrayList<>();
        byNode.forEach((node, workers) -> {
            long[] ids = workers.stream().mapToLong(Long::longValue).toArray();
            Buffer request = ShardQueryCodec.encode(new ShardQueryCodec.Request(key, kind, hashes, ids));
            replies.add(request(QUERY, ADDRESS_PREFIX + node, request, options)
                    .map(reply -> {
                        synchronized (gather) {
                            gather.addReply(reply, new HashSet<>(workers)).forEach(candidates::remove);
                        }
                        return (Void) null;
                    })
                    .recover(t -> {
                        if (t instanceof IllegalArgumentException || t instanceof IndexOutOfBoundsException) {
                            rejected();
                        }
                        LOG.debug(
                                "shard holder {} did not answer for {} instances of {}: {}",
                                node,
                                workers.size(),
                                key,
                                t.toString());
                        return Future.succeededFuture();
                    }));
        });
        return Future.join(replies).transform(ignored -> {
            if (!candidates.isEmpty()) {
                counters.shardRetried();
            }
            return ask(key, kind, hashes, candidates, gather);
        });
    }
}
