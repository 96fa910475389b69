package dev.kvindexer.cluster;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.OwnerMatches;
import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.dump.SnapshotReader;
import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.partition.MergedPartition;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PeerSnapshot;
import dev.kvindexer.partition.PartitionView;
import dev.kvindexer.partition.QueryResult;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.spi.cluster.ClusterManager;
import java.io.ByteArrayInputStream;
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

    private final Vertx vertx;
    private final ClusterManager manager;
    private final Registry registry;
    private final ShardPlacement placement;
    private final ClusterCounters counters;
    private final DeliveryOptions options;
    private final DeliveryOptions snapshotOptions;
    private final long maxSnapshotBytes;
    private MessageConsumer<Buffer> consumer;

    /**
     * {@code timeout} bounds one holder's answer to a query; {@code snapshotTimeout} and {@code maxSnapshotBytes} an
     * instance's snapshot taken from another node, as for recovery from peers.
     */
    public ShardQueries(Vertx vertx, ClusterManager manager, Registry registry, ShardPlacement placement,
                        ClusterCounters counters, Duration timeout, Duration snapshotTimeout, long maxSnapshotBytes) {
        this.vertx = vertx;
        this.manager = manager;
        this.registry = registry;
        this.placement = placement;
        this.counters = counters;
        this.options = new DeliveryOptions().setSendTimeout(timeout.toMillis());
        this.snapshotOptions = new DeliveryOptions().setSendTimeout(snapshotTimeout.toMillis());
        this.maxSnapshotBytes = maxSnapshotBytes;
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

    private void answer(Message<Buffer> msg) {
        ShardQueryCodec.Request request;
        try {
            request = ShardQueryCodec.decodeRequest(msg.body());
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            rejected();
            msg.fail(400, "malformed shard query: " + e.getMessage());
            return;
        }
        PartitionRef partition = registry.partition(request.key()).orElse(null);
        Set<Long> served = new HashSet<>();
        for (long w : request.workers()) {
            if (request.key().equals(registry.partitionOf(w)) && registry.servesHere(w)) {
                served.add(w);
            }
        }
        if (partition == null || served.isEmpty()) {
            msg.reply(ShardQueryCodec.encode(new ShardQueryCodec.Reply(0, new long[0], List.of(), new int[2])));
            return;
        }
        PartitionRef hosted = partition instanceof PartitionView v ? v.hosted() : partition;
        localQuery(hosted, request.sequenceHashes(), request.hashes()).onComplete(ar -> {
            if (ar.failed()) {
                msg.fail(500, String.valueOf(ar.cause().getMessage()));
                return;
            }
            QueryResult r = ar.result();
            List<OwnerMatch> owners = new ArrayList<>();
            for (OwnerMatch m : r.matches()) {
                if (served.contains(m.workerId())) {
                    owners.add(m);
                }
            }
            long[] ids = served.stream().mapToLong(Long::longValue).toArray();
            msg.reply(ShardQueryCodec.encode(new ShardQueryCodec.Reply(r.blockSize(), ids, owners, r.sharedReach())));
        });
    }

    /**
     * An instance's exact snapshot from the first of {@code candidates} that serves it (see {@link ShardHandover}),
     * or a failure when none does.
     */
    Future<PeerSnapshot> snapshot(PartitionKey key, long worker, ArrayDeque<String> candidates) {
        String node = candidates.poll();
        if (node == null) {
            return Future.failedFuture("no live node serves instance " + Long.toUnsignedString(worker));
        }
        Buffer request = ShardQueryCodec.encode(new ShardQueryCodec.Request(key, false, new long[0], new long[] {worker}));
        return vertx.eventBus().<Buffer>request(ShardHandover.ADDRESS_PREFIX + node, request, snapshotOptions)
                .compose(reply -> vertx.<PeerSnapshot>executeBlocking(() -> parse("node " + node, key, reply.body()), false))
                .recover(t -> {
                    LOG.debug("node {} gave no snapshot of instance {}: {}", node, Long.toUnsignedString(worker), t.toString());
                    return snapshot(key, worker, candidates);
                });
    }

    /** A snapshot document of one partition section, as /dump sends it and a peer reads it. */
    static Buffer document(PartitionKey key, int blockSize, byte[] payload) {
        return Buffer.buffer(SnapshotWriter.header()).appendBytes(SnapshotWriter.sectionHead(key, blockSize, payload.length))
                .appendBytes(payload).appendBytes(SnapshotWriter.end());
    }

    private PeerSnapshot parse(String source, PartitionKey key, Buffer document) throws IOException {
        SnapshotCollector collector = new SnapshotCollector(source);
        SnapshotReader.read(new ByteArrayInputStream(document.getBytes()), maxSnapshotBytes, collector);
        SnapshotCollector.Collected c = collector.partitions().get(key);
        if (c == null || !c.exact) {
            throw new IOException("the snapshot of " + source + " lacks an exact section for " + key.dumpKey());
        }
        return c.snapshot();
    }

    /**
     * The whole partition as one node holding every instance would hold it: this node's instances from its own
     * partition, every other from a node that serves it. An instance no live node serves is left out (and logged).
     */
    Future<MergedPartition> whole(PartitionRef hosted) {
        PartitionKey key = hosted.key();
        List<Long> mine = new ArrayList<>();
        List<Long> elsewhere = new ArrayList<>();
        for (Registry.Member m : registry.members(key)) {
            (registry.servesHere(m.workerId()) ? mine : elsewhere).add(m.workerId());
        }
        List<Future<PeerSnapshot>> parts = new ArrayList<>();
        parts.add(hosted.snapshotOf(mine.stream().mapToLong(Long::longValue).toArray())
                .compose(payload -> vertx.<PeerSnapshot>executeBlocking(
                        () -> parse("this node", key, document(key, hosted.blockSize(), payload)), false)));
        for (long w : elsewhere) {
            parts.add(snapshot(key, w, placement.askOrder(key, w, manager.getNodes(), manager.getNodeId()))
                    .recover(t -> {
                        LOG.warn("the dump of {} leaves out instance {}: {}", key.dumpKey(), Long.toUnsignedString(w),
                                t.getMessage());
                        return Future.succeededFuture(null);
                    }));
        }
        return Future.all(parts).compose(all -> vertx.executeBlocking(() -> {
            List<PeerSnapshot.Event> events = new ArrayList<>();
            List<PeerSnapshot.StreamWatermark> watermarks = new ArrayList<>();
            for (Future<PeerSnapshot> f : parts) {
                if (f.result() != null) {
                    events.addAll(f.result().events());
                    watermarks.addAll(f.result().watermarks());
                }
            }
            return new MergedPartition(key, hosted.blockSize(), new PeerSnapshot(events, watermarks, true));
        }, false));
    }

    /** A message from another member was malformed. */
    void rejected() {
        counters.rejected(REJECTED_SOURCE, "invalid");
    }

    /** Whether {@code node} serves the instance (holds it since registration); false when it cannot be asked. */
    Future<Boolean> serves(String node, PartitionKey key, long workerId) {
        Buffer request = ShardQueryCodec.encode(new ShardQueryCodec.Request(key, false, new long[0], new long[] {workerId}));
        return vertx.eventBus().<Buffer>request(ADDRESS_PREFIX + node, request, options)
                .map(reply -> {
                    for (long w : ShardQueryCodec.decodeReply(reply.body()).served()) {
                        if (w == workerId) {
                            return true;
                        }
                    }
                    return false;
                })
                .otherwise(false);
    }

    private static Future<QueryResult> localQuery(PartitionRef hosted, boolean sequence, long[] hashes) {
        return sequence ? hosted.queryBySequenceHashes(hashes) : hosted.query(hashes);
    }

    /** A query of {@code hosted}'s partition over every instance registered in the cluster. */
    Future<QueryResult> query(PartitionRef hosted, boolean sequence, long[] hashes) {
        PartitionKey key = hosted.key();
        Set<Long> mine = new HashSet<>();
        List<Long> elsewhere = new ArrayList<>();
        for (Registry.Member m : registry.members(key)) {
            if (registry.servesHere(m.workerId())) {
                mine.add(m.workerId());
            } else {
                elsewhere.add(m.workerId());
            }
        }
        Future<QueryResult> local = localQuery(hosted, sequence, hashes);
        Merge merge = new Merge(mine);
        if (elsewhere.isEmpty()) {
            return local.map(r -> merge.add(r).result());
        }
        counters.scattered();
        Map<Long, ArrayDeque<String>> candidates = new LinkedHashMap<>();
        String self = manager.getNodeId();
        List<String> nodes = manager.getNodes();
        for (long w : elsewhere) {
            candidates.put(w, placement.askOrder(key, w, nodes, self));
        }
        return local.compose(r -> {
            merge.add(r);
            return ask(key, sequence, hashes, candidates, merge);
        });
    }

    /** One round: each unanswered instance goes to its next candidate; what stays unanswered goes round again. */
    private Future<QueryResult> ask(PartitionKey key, boolean sequence, long[] hashes,
                                    Map<Long, ArrayDeque<String>> candidates, Merge merge) {
        Map<String, List<Long>> byNode = new HashMap<>();
        for (var it = candidates.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            String node = e.getValue().poll();
            if (node == null) {
                merge.missing();
                it.remove();
            } else {
                byNode.computeIfAbsent(node, n -> new ArrayList<>()).add(e.getKey());
            }
        }
        if (byNode.isEmpty()) {
            QueryResult done = merge.result();
            if (done.missingInstances() > 0) {
                counters.missingInstances(done.missingInstances());
            }
            return Future.succeededFuture(done);
        }
        List<Future<Void>> replies = new ArrayList<>();
        byNode.forEach((node, workers) -> {
            long[] ids = workers.stream().mapToLong(Long::longValue).toArray();
            Buffer request = ShardQueryCodec.encode(new ShardQueryCodec.Request(key, sequence, hashes, ids));
            replies.add(vertx.eventBus().<Buffer>request(ADDRESS_PREFIX + node, request, options)
                    .map(reply -> {
                        ShardQueryCodec.Reply r = ShardQueryCodec.decodeReply(reply.body());
                        Set<Long> asked = new HashSet<>(workers);
                        for (long w : r.served()) {
                            if (asked.contains(w)) {
                                candidates.remove(w);
                                merge.served(w);
                            }
                        }
                        merge.addRemote(r, asked);
                        return (Void) null;
                    })
                    .recover(t -> {
                        if (t instanceof IllegalArgumentException || t instanceof IndexOutOfBoundsException) {
                            counters.rejected(REJECTED_SOURCE, "invalid");
                        }
                        LOG.debug("shard holder {} did not answer for {} instances of {}: {}", node, workers.size(), key,
                                t.toString());
                        return Future.succeededFuture();
                    }));
        });
        return Future.join(replies).transform(ignored -> {
            if (!candidates.isEmpty()) {
                counters.shardRetried();
            }
            return ask(key, sequence, hashes, candidates, merge);
        });
    }

    /** The answer being assembled: this node's instances, then each holder's for the instances it served. */
    private static final class Merge {
        private final Set<Long> accepted;
        private final List<OwnerMatch> owners = new ArrayList<>();
        private final int[] reach = new int[2];
        private int blockSize;
        private int missing;

        Merge(Set<Long> mine) {
            this.accepted = new HashSet<>(mine);
        }

        Merge add(QueryResult local) {
            blockSize = local.blockSize();
            for (OwnerMatch m : local.matches()) {
                if (accepted.contains(m.workerId())) {
                    owners.add(m);
                }
            }
            widenReach(local.sharedReach());
            return this;
        }

        synchronized void served(long workerId) {
            accepted.add(workerId);
        }

        /** A holder's owners, for instances asked of it and served by it, each taken once. */
        synchronized void addRemote(ShardQueryCodec.Reply r, Set<Long> asked) {
            Set<Long> served = new HashSet<>();
            for (long w : r.served()) {
                served.add(w);
            }
            for (OwnerMatch m : r.owners()) {
                if (asked.contains(m.workerId()) && served.contains(m.workerId())) {
                    owners.add(m);
                }
            }
            widenReach(r.sharedReach());
        }

        private void widenReach(int[] other) {
            reach[0] = Math.max(reach[0], other[0]);
            reach[1] = Math.max(reach[1], other[1]);
        }

        /** An instance no live node answered for. */
        synchronized void missing() {
            missing++;
        }

        synchronized QueryResult result() {
            return new QueryResult(blockSize, OwnerMatches.of(owners), reach.clone(), missing);
        }
    }
}
