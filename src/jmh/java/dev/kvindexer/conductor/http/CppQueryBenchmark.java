package dev.kvindexer.conductor.http;

import dev.kvindexer.conductor.CppConductorRegistration;
import dev.kvindexer.conductor.CppConductorState;
import dev.kvindexer.conductor.event.CppConductorEvent;
import dev.kvindexer.hash.HashProfile;
import dev.kvindexer.hash.VllmBlockHasher;
import io.vertx.core.buffer.Buffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * A C++ Conductor query past HTTP: the prompt hashed and walked for every registered rank, and the msgpack answer
 * written. Eight engines of one rank each, as {@code CppQueryFill} registers them, engine {@code e} holding the first
 * {@code e + 1} eighths of the prompt's blocks.
 */
@State(Scope.Thread)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class CppQueryBenchmark {
    private static final int BLOCK_SIZE = 16;
    private static final int ENGINES = 8;
    private static final HashProfile PROFILE = new HashProfile(HashProfile.Algorithm.SHA256_CBOR, "0");
    private static final CppConductorState.ContextKey CONTEXT =
            new CppConductorState.ContextKey("default", "bench-model", "", BLOCK_SIZE);

    @Param({"128", "8192"})
    int tokens;

    private CppConductorState state;
    private int[] prompt;
    private CppConductorState.Matches matches;
    private byte[] body;

    @Setup
    public void fill() {
        state = new CppConductorState();
        prompt = new SplittableRandom(7).ints(tokens, 0, 32_000).toArray();
        VllmBlockHasher.Chain chain = new VllmBlockHasher(PROFILE).chain(prompt, BLOCK_SIZE, null, null);
        long[] keys = new long[chain.blocks()];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = chain.nextKey();
        }
        for (int e = 0; e < ENGINES; e++) {
            String instance = "eng-" + e;
            state.register(new CppConductorRegistration(
                    "tcp://127.0.0.1:" + (6000 + e),
                    "vLLM",
                    "bench-model",
                    instance,
                    BLOCK_SIZE,
                    0,
                    PROFILE,
                    "",
                    "",
                    "default",
                    null));
            long[] held = Arrays.copyOf(keys, keys.length * (e + 1) / ENGINES);
            String refused = state.apply(instance + "|default|0", new CppConductorEvent.GpuStored(held));
            if (refused != null) {
                throw new IllegalStateException(refused);
            }
        }
        matches = state.query(CONTEXT, null, prompt, null);
        body = queryBody(prompt);
    }

    /** The body {@code CppQueryFill} sends: model, block size, token ids as little-endian int32 in a bin. */
    private static byte[] queryBody(int[] prompt) {
        java.nio.ByteBuffer ids =
                java.nio.ByteBuffer.allocate(4 * prompt.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        ids.asIntBuffer().put(prompt);
        try (org.msgpack.core.MessageBufferPacker p = org.msgpack.core.MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(3);
            p.packString("model").packString(CONTEXT.model());
            p.packString("block_size").packLong(BLOCK_SIZE);
            p.packString("token_ids").packBinaryHeader(ids.capacity()).writePayload(ids.array());
            return p.toByteArray();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public Buffer queryAndAnswer() {
        return CppQueryAnswer.of(state.query(CONTEXT, null, prompt, null), BLOCK_SIZE);
    }

    /** The answer alone, from one query's matches. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public Buffer answer() {
        return CppQueryAnswer.of(matches, BLOCK_SIZE);
    }

    /** The request read and checked, as the route does before it hashes. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public CppConductorRequests.Query decode() {
        return CppConductorRequests.query(CppConductorBody.read(body));
    }
}
