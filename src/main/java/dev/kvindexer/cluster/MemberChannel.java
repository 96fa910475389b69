package dev.kvindexer.cluster;

import com.hazelcast.cluster.Member;
import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.metrics.Spans;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;

/**
 * Messages from this member to the others of the cluster over the clustered event bus, each sealed to the member it
 * goes to and each answer sealed by the member that gives it: a change sent to every other member and waited for until
 * each applied it (or failed, or timed out), or a question asked of the others in turn until one answers.
 */
public final class MemberChannel {
    static final String VERTX_NODE_ID = "__vertx.nodeId";
    /** How long another member gets to answer, unless a channel says otherwise. */
    public static final Duration TIMEOUT = Duration.ofSeconds(2);

    private final Vertx vertx;
    private final HazelcastInstance hazelcast;
    private final SealedBytes seals;
    private final String address;
    private final String kind;
    private final String nodeId;
    private final DeliveryOptions options;
    private final Spans spans;
    private final String spanName;

    /**
     * @param address  the prefix of every member's address on this channel; a member's node id completes it
     * @param kind     the seal kind of its messages
     * @param timeout  how long a member gets to answer
     * @param spanName what the span of each member a message waits for is called
     */
    public MemberChannel(
            Vertx vertx,
            HazelcastInstance hazelcast,
            String address,
            String kind,
            Duration timeout,
            Spans spans,
            String spanName) {
        this.vertx = vertx;
        this.hazelcast = hazelcast;
        this.seals = SealedBytes.of(hazelcast);
        this.address = address;
        this.kind = kind;
        this.nodeId = hazelcast.getCluster().getLocalMember().getAttribute(VERTX_NODE_ID);
        this.options = new DeliveryOptions().setSendTimeout(timeout.toMillis());
        this.spans = spans;
        this.spanName = spanName;
    }

    /**
     * Takes what other members send this one, on the caller's context: each message is opened and {@code answer}ed
     * (null: a plain acknowledgement). One without the cluster's seal is answered 401 (and counted); one {@code answer}
     * refuses (a RuntimeException, thrown or as its failed future) 400.
     *
     * @param what names the messages in the log and the refusals
     */
    public MessageConsumer<Buffer> listen(Function<byte[], Future<byte[]>> answer, Logger log, String what) {
        return vertx.eventBus().consumer(address + nodeId, message -> {
            byte[] opened = seals.open(kind, nodeId, message.body().getBytes());
            if (opened == null) {
                message.fail(401, "unsealed " + what);
                return;
            }
            Future<byte[]> reply;
            try {
                reply = answer.apply(opened);
            } catch (RuntimeException e) {
                reply = Future.failedFuture(e);
            }
            reply.onComplete(done -> {
                if (done.failed()) {
                    log.warn("refused a {}: {}", what, done.cause().toString());
                    message.fail(400, what + " refused: " + done.cause().getMessage());
                } else {
                    message.reply(
                            done.result() == null ? "ok" : Buffer.buffer(seals.seal(kind, nodeId, done.result())));
                }
            });
        });
    }

    /**
     * The most bytes one message on a channel may carry, for a node whose recovery takes at most {@code
     * recoveryMaxBytes}: what every member's bus takes from another, less the envelope.
     */
    public static long largestMessage(long recoveryMaxBytes) {
        return BusFrameGuard.limit(recoveryMaxBytes, Runtime.getRuntime().maxMemory()) - BusFrameGuard.ENVELOPE;
    }

    /** A listener's answer to a change it applied: a plain acknowledgement. */
    public static Function<byte[], Future<byte[]>> applying(java.util.function.Consumer<byte[]> apply) {
        return bytes -> {
            apply.accept(bytes);
            return Future.succeededFuture();
        };
    }

    /**
     * Sends {@code bytes} to every other member; completes (never failed) once each answered, failed or timed out,
     * with how many did not take it.
     */
    public Future<Integer> toAll(byte[] bytes) {
        List<Future<?>> acks = new ArrayList<>();
        for (String other : others()) {
            acks.add(ask(other, bytes));
        }
        return Future.join(acks).transform(done -> {
            int missed = 0;
            for (Future<?> ack : acks) {
                missed += ack.failed() ? 1 : 0;
            }
            return Future.succeededFuture(missed);
        });
    }

    /**
     * Asks the other members in turn until one answers: its answer, opened. Fails when none does (none listens, each
     * failed or timed out, or an answer was not sealed by the cluster).
     */
    public Future<byte[]> askAny(byte[] bytes) {
        return askNext(new ArrayDeque<>(others()), bytes, "no other member answers");
    }

    private Future<byte[]> askNext(ArrayDeque<String> left, byte[] bytes, String lastFailure) {
        String other = left.poll();
        if (other == null) {
            return Future.failedFuture(lastFailure);
        }
        return ask(other, bytes)
                .compose(reply -> {
                    byte[] opened = reply instanceof Buffer b ? seals.open(kind, other, b.getBytes()) : null;
                    return opened == null
                            ? Future.failedFuture("member " + other + " answered without the cluster's seal")
                            : Future.succeededFuture(opened);
                })
                .recover(t -> askNext(left, bytes, String.valueOf(t.getMessage())));
    }

    private Future<Object> ask(String other, byte[] bytes) {
        Buffer sealed = Buffer.buffer(seals.seal(kind, other, bytes));
        Future<Message<Object>> asked = spans.on()
                ? spans.around(
                        spanName,
                        t -> t.put("kvindexer.node", other),
                        () -> vertx.eventBus().request(address + other, sealed, options))
                : vertx.eventBus().request(address + other, sealed, options);
        return asked.map(Message::body);
    }

    private List<String> others() {
        List<String> out = new ArrayList<>();
        for (Member m : hazelcast.getCluster().getMembers()) {
            String other = m.getAttribute(VERTX_NODE_ID);
            if (other != null && !other.equals(nodeId)) {
                out.add(other);
            }
        }
        return out;
    }
}
