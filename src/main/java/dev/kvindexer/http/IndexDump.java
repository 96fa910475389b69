package dev.kvindexer.http;

import dev.kvindexer.dump.DumpWriter;
import dev.kvindexer.dump.PartitionDumpJson;
import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PartitionSnapshot;
import dev.kvindexer.partition.PartitionView;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.Responses;
import dev.kvindexer.web.StreamedBody;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The whole index as {@code GET /dump} answers it: Dynamo's JSON (docs/protocol/dump.md#json-document), or the binary
 * snapshot a recovering
 * node asks for. Every partition's exact snapshot is taken first (compact, each in one step of its actor), so the
 * answer's headers can say whether it is whole: instances no live node could give are counted in
 * {@code x-kvindexer-missing-instances} and named in their partition. The text is then made a piece at a time as the
 * client reads it, and each snapshot let go once it is written. A partition that could not be snapshotted is written as
 * its error. The snapshots' bytes are held within the node's budget ({@link DumpAdmission}): a dump it cannot hold is a
 * 503 with Retry-After.
 */
public final class IndexDump {
    /** Characters of JSON made at a time. */
    static final int PIECE_CHARS = 64 * 1024;
    /** Bytes of a binary snapshot written at a time. */
    static final int PIECE_BYTES = 64 * 1024;
    /** Heap a whole JSON document takes, text and msgpack encoding together, for a byte of snapshot. */
    static final long WHOLE_JSON_PER_SNAPSHOT_BYTE = 40;

    private IndexDump() {}

    /** Answers {@code response} with the dump; completes when it is written. */
    public static Future<Void> serve(
            Registry registry, HttpServerResponse response, boolean binary, DumpAdmission admission) {
        if (!admission.startSnapshots()) {
            return unavailable(response, "another dump is taking its snapshots; try again shortly");
        }
        List<PartitionRef> partitions = registry.partitions();
        PartitionSnapshot.Order order =
                binary ? PartitionSnapshot.Order.DEPTH_FIRST : PartitionSnapshot.Order.BREADTH_FIRST;
        List<Future<PartitionSnapshot>> taken = new ArrayList<>();
        for (PartitionRef p : partitions) {
            taken.add(p.snapshot(order));
        }
        return Future.join(taken).transform(ar -> {
            admission.snapshotsTaken();
            int missing = 0;
            long bytes = 0;
            for (Future<PartitionSnapshot> f : taken) {
                missing += f.succeeded() ? f.result().missingInstances().length : 0;
                bytes += f.succeeded() ? f.result().payload().length : 0;
            }
            if (!admission.reserve(bytes)) {
                taken.clear();
                return unavailable(
                        response,
                        "the index's snapshots (" + bytes + " bytes) do not fit the node's network budget now ("
                                + admission.limit() + " bytes, --max-network-memory); try again later");
            }
            Held held = new Held(admission, bytes);
            response.setStatusCode(200)
                    .putHeader("content-type", binary ? SnapshotWriter.MEDIA_TYPE : "application/json");
            if (missing > 0) {
                response.putHeader(PartitionQuery.MISSING_INSTANCES, Integer.toString(missing));
            }
            return StreamedBody.write(
                            response,
                            binary ? binaryPieces(partitions, taken, held) : jsonPieces(partitions, taken, held))
                    .andThen(done -> held.releaseAll());
        });
    }

    /** The budget bytes a dump's snapshots hold, given back as each is written and all at its end. */
    private static final class Held {
        private final DumpAdmission admission;
        private long bytes;

        Held(DumpAdmission admission, long bytes) {
            this.admission = admission;
            this.bytes = bytes;
        }

        void release(long n) {
            long r = Math.min(n, bytes);
            bytes -= r;
            admission.release(r);
        }

        void releaseAll() {
            release(bytes);
        }
    }

    private static Future<Void> unavailable(HttpServerResponse response, String why) {
        new HttpError(503, why)
                .answer(response.putHeader("retry-after", Integer.toString(DumpAdmission.RETRY_AFTER_SECONDS)));
        return Future.failedFuture(why);
    }

    /**
     * {@code GET /dump?instance_id=}: the exact snapshot of one instance (its blocks, its streams' watermarks and
     * losses) from the partition it is registered in here, as a document of that one section; what a node repairing a
     * stream from this one installs. An instance not registered here, or whose blocks this node does not hold (another
     * node's shard, one being taken over), is a 404.
     */
    public static Future<Buffer> instance(Registry registry, long workerId) {
        PartitionKey key = registry.partitionOf(workerId);
        if (key == null) {
            return Future.failedFuture(
                    new HttpError(404, "instance " + Long.toUnsignedString(workerId) + " not found"));
        }
        PartitionRef partition = registry.partition(key).orElse(null);
        if (partition == null || !registry.servesHere(workerId)) {
            return Future.failedFuture(
                    new HttpError(404, "instance " + Long.toUnsignedString(workerId) + " is not served here"));
        }
        PartitionRef hosted = PartitionView.hostedOf(partition);
        return hosted.snapshotOf(new long[] {workerId})
                .map(payload -> Buffer.buffer(SnapshotWriter.document(key, hosted.blockSize(), payload)));
    }

    /**
     * The whole JSON document as one string, for the rare client that asks for it as msgpack: held whole, so its
     * size (about {@link #WHOLE_JSON_PER_SNAPSHOT_BYTE} bytes a snapshot byte, text and encoding together) must fit
     * the budget, or the answer is a 503.
     */
    public static void whole(RoutingContext ctx, Registry registry, DumpAdmission admission) {
        if (!admission.startSnapshots()) {
            unavailable(ctx.response(), "another dump is taking its snapshots; try again shortly");
            return;
        }
        List<PartitionRef> partitions = registry.partitions();
        List<Future<PartitionSnapshot>> taken = new ArrayList<>();
        for (PartitionRef p : partitions) {
            taken.add(p.snapshot(PartitionSnapshot.Order.BREADTH_FIRST));
        }
        Future.join(taken).transform(ar -> {
            admission.snapshotsTaken();
            long bytes = 0;
            for (Future<PartitionSnapshot> f : taken) {
                bytes += f.succeeded() ? f.result().payload().length * WHOLE_JSON_PER_SNAPSHOT_BYTE : 0;
            }
            if (!admission.reserve(bytes)) {
                return unavailable(
                        ctx.response(),
                        "the whole dump as msgpack (about " + bytes + " bytes) does not fit the node's network "
                                + "budget now; ask for JSON, which is streamed");
            }
            Held held = new Held(admission, bytes);
            ctx.addEndHandler(ended -> held.releaseAll());
            StringBuilder out = new StringBuilder();
            StreamedBody.Pieces pieces = jsonPieces(partitions, taken, new Held(admission, 0));
            try {
                for (Buffer b; (b = pieces.next()) != null; ) {
                    out.append(b.toString(StandardCharsets.UTF_8));
                }
            } catch (Exception e) {
                Responses.error(ctx, e);
                return Future.failedFuture(e);
            }
            Responses.json(ctx, 200, out.toString());
            return Future.succeededFuture();
        });
    }

    private static StreamedBody.Pieces jsonPieces(
            List<PartitionRef> partitions, List<Future<PartitionSnapshot>> taken, Held held) {
        return new StreamedBody.Pieces() {
            private int next;
            private PartitionDumpJson current;
            private long currentBytes;
            private boolean ended;

            @Override
            public Buffer next() throws Exception {
                if (current != null) {
                    String piece = current.next(PIECE_CHARS);
                    if (piece != null) {
                        return Buffer.buffer(piece);
                    }
                    current = null;
                    held.release(currentBytes);
                }
                if (next == partitions.size()) {
                    if (ended) {
                        return null;
                    }
                    ended = true;
                    return Buffer.buffer(partitions.isEmpty() ? "{}" : "}");
                }
                int i = next++;
                PartitionKey key = partitions.get(i).key();
                StringBuilder head = new StringBuilder(i == 0 ? "{" : ",")
                        .append(DumpWriter.quoted(key.dumpKey()))
                        .append(':');
                Future<PartitionSnapshot> f = taken.get(i);
                if (f.failed()) {
                    return Buffer.buffer(
                            head.append(DumpWriter.failedPartition(f.cause().getMessage()))
                                    .toString());
                }
                currentBytes = f.result().payload().length;
                current = new PartitionDumpJson(
                        partitions.get(i).blockSize(),
                        f.result().payload(),
                        f.result().missingInstances());
                taken.set(i, null);
                return Buffer.buffer(head.toString());
            }
        };
    }

    private static StreamedBody.Pieces binaryPieces(
            List<PartitionRef> partitions, List<Future<PartitionSnapshot>> taken, Held held) {
        return new StreamedBody.Pieces() {
            private int next = -1;
            /** The payload being written, and how much of it is. */
            private byte[] payload;

            private int written;

            @Override
            public Buffer next() {
                if (payload != null) {
                    int n = Math.min(PIECE_BYTES, payload.length - written);
                    Buffer piece = Buffer.buffer(Arrays.copyOfRange(payload, written, written + n));
                    written += n;
                    if (written == payload.length) {
                        held.release(payload.length);
                        payload = null;
                    }
                    return piece;
                }
                int i = next++;
                if (i < 0) {
                    return Buffer.buffer(SnapshotWriter.header());
                }
                if (i > partitions.size()) {
                    return null;
                }
                if (i == partitions.size()) {
                    return Buffer.buffer(SnapshotWriter.end());
                }
                PartitionRef p = partitions.get(i);
                Future<PartitionSnapshot> f = taken.get(i);
                taken.set(i, null);
                if (f.failed()) {
                    return Buffer.buffer(
                            SnapshotWriter.failedSection(p.key(), f.cause().getMessage()));
                }
                byte[] section = f.result().payload();
                if (section.length > 0) {
                    payload = section;
                    written = 0;
                }
                return Buffer.buffer(SnapshotWriter.sectionHead(p.key(), p.blockSize(), section.length));
            }
        };
    }
}
