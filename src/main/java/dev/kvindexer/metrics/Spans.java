package dev.kvindexer.metrics;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.vertx.core.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * kvindexer's own spans beside the ones Vert.x makes for each request and event-bus message: a partition's read or
 * change, each shard a scattered query asks, each peer a booking waits for, and one ingest batch in every {@link
 * #ingestEvery()} (docs/operations.md#tracing). Off, every method runs its work as it is and allocates nothing.
 */
public final class Spans {
    /** No tracer: nothing is traced. */
    public static final Spans OFF = new Spans(null, 0);

    private final Tracer tracer;
    private final long ingestEvery;
    private final AtomicLong batches = new AtomicLong();

    /**
     * @param tracer      the SDK's tracer, or null for none
     * @param ingestEvery one ingest batch in this many gets a trace of its own; 0 for none
     */
    Spans(Tracer tracer, long ingestEvery) {
        this.tracer = tracer;
        this.ingestEvery = tracer == null ? 0 : ingestEvery;
    }

    public boolean on() {
        return tracer != null;
    }

    /** One ingest batch in this many is traced; 0 when none is. */
    public long ingestEvery() {
        return ingestEvery;
    }

    /**
     * {@code work} inside a span named {@code name}, a child of the current one (the request's): the span is current
     * while {@code work} starts, so the event-bus messages it sends are its children, and it ends when the future
     * does, marked as an error when it fails. Work no request asked for (a timer's) runs without a span.
     *
     * @param tags sets the span's attributes before it starts
     */
    public <T> Future<T> around(String name, Consumer<Tags> tags, Supplier<Future<T>> work) {
        if (tracer == null || !Span.current().getSpanContext().isValid()) {
            return work.get();
        }
        SpanBuilder builder = tracer.spanBuilder(name).setSpanKind(SpanKind.INTERNAL);
        tags.accept(new Tags(builder));
        Span span = builder.startSpan();
        Future<T> result;
        try (Scope ignored = span.makeCurrent()) {
            result = work.get();
        } catch (RuntimeException e) {
            failed(span, e);
            span.end();
            throw e;
        }
        return result.andThen(done -> {
            if (done.failed()) {
                failed(span, done.cause());
            }
            span.end();
        });
    }

    /**
     * The current request's span, to be made current again where its work continues on another context (where
     * {@link #around} would find no request); a parent that traces nothing when there is none.
     */
    public Parent parent() {
        if (tracer == null || !Span.current().getSpanContext().isValid()) {
            return Parent.NONE;
        }
        return new Parent(Context.current());
    }

    /**
     * The server span Vert.x began for the request being handled, to be named by its route once routing found it;
     * null when no span is recorded (tracing off, or the request not sampled).
     */
    public static RequestSpan requestSpan() {
        Span span = Span.current();
        return span.isRecording() ? new RequestSpan(span) : null;
    }

    /** A request's server span, named as OpenTelemetry's conventions name one once its route or method is known. */
    public static final class RequestSpan {
        private final Span span;

        RequestSpan(Span span) {
            this.span = span;
        }

        public void routed(String method, String route) {
            span.updateName(method + " " + route);
            span.setAttribute("http.route", route);
        }

        /** A gRPC call's span, named as OpenTelemetry's RPC conventions name one: service/method. */
        public void called(String service, String method) {
            span.updateName(service + "/" + method);
            span.setAttribute("rpc.system", "grpc");
            span.setAttribute("rpc.service", service);
            span.setAttribute("rpc.method", method);
        }
    }

    /** A request's trace context, carried to where its work continues. */
    public static final class Parent {
        static final Parent NONE = new Parent(null);

        private final Context context;

        Parent(Context context) {
            this.context = context;
        }

        /** {@code work} started with this parent current, so the spans it begins are its children. */
        public <T> Future<T> within(Supplier<Future<T>> work) {
            if (context == null) {
                return work.get();
            }
            try (Scope ignored = context.makeCurrent()) {
                return work.get();
            }
        }
    }

    private static void failed(Span span, Throwable t) {
        span.setStatus(StatusCode.ERROR, String.valueOf(t.getMessage()));
        span.recordException(t);
    }

    /**
     * A trace for the next ingest batch when it is one of those sampled, else null: its root span starts now and
     * {@link BatchTrace#handedOver()} ends it; the partition's apply is its child.
     */
    public BatchTrace ingestBatch(long workerId, int dpRank, long seq, int events) {
        if (ingestEvery == 0 || batches.incrementAndGet() % ingestEvery != 0) {
            return null;
        }
        Span span = tracer.spanBuilder("ingest.batch")
                .setNoParent()
                .setSpanKind(SpanKind.CONSUMER)
                .setAttribute("kvindexer.worker_id", Long.toUnsignedString(workerId))
                .setAttribute("kvindexer.dp_rank", dpRank)
                .setAttribute("kvindexer.seq", seq)
                .setAttribute("kvindexer.events", events)
                .startSpan();
        return new BatchTrace(tracer, span);
    }

    /** One sampled ingest batch's trace, carried with the batch from its listener to its partition's actor. */
    public static final class BatchTrace {
        private final Tracer tracer;
        private final Span batch;

        BatchTrace(Tracer tracer, Span batch) {
            this.tracer = tracer;
            this.batch = batch;
        }

        /** The batch left its listener for its partition: its root span ends. */
        public void handedOver() {
            batch.end();
        }

        /** The batch was not handed over (the partition had stopped). */
        public void dropped(String why) {
            batch.setStatus(StatusCode.ERROR, why);
            batch.end();
        }

        /** The actor begins to apply the batch: a child span of the batch's, which the caller ends. */
        public Open applying(String partition) {
            return new Open(tracer.spanBuilder("partition.apply")
                    .setParent(Context.root().with(batch))
                    .setAttribute("kvindexer.partition", partition)
                    .startSpan());
        }
    }

    /** A span's attributes as its caller sets them before it starts. */
    public static final class Tags {
        private final SpanBuilder builder;

        Tags(SpanBuilder builder) {
            this.builder = builder;
        }

        public Tags put(String key, String value) {
            builder.setAttribute(key, value);
            return this;
        }

        public Tags put(String key, long value) {
            builder.setAttribute(key, value);
            return this;
        }
    }

    /** A span begun for its caller to end, without the caller knowing OpenTelemetry's types. */
    public static final class Open {
        private final Span span;

        Open(Span span) {
            this.span = span;
        }

        public void failed(Throwable t) {
            Spans.failed(span, t);
        }

        public void end() {
            span.end();
        }
    }
}
