package dev.kvindexer.http;

import dev.kvindexer.web.JsonBinding;
import dev.kvindexer.web.JsonBodyReader;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
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
 * What reading a Dynamo {@code /query} body costs: parsing its bytes (the token ids packed on the way), then binding the
 * parsed body to its record.
 */
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RequestBindingBenchmark {
    @Param({"128", "8192"})
    int tokens;

    byte[] body;
    JsonObject parsed;

    @Setup
    public void build() {
        StringBuilder json = new StringBuilder("{\"model_name\":\"llama-3-8b\",\"routing_group\":\"default\",");
        json.append("\"lora_name\":null,\"token_ids\":[");
        for (int i = 0; i < tokens; i++) {
            json.append(i == 0 ? "" : ",").append(100_000 + i * 7);
        }
        body = json.append("]}").toString().getBytes(StandardCharsets.UTF_8);
        parsed = (JsonObject) JsonBodyReader.read(body);
    }

    @Benchmark
    public Object parse() {
        return JsonBodyReader.read(body);
    }

    @Benchmark
    public Object bind() {
        return new Object[] {
            JsonBinding.bind(parsed, DynamoRequests.Query.class),
            JsonBinding.bind(parsed, DynamoRequests.HashSeed.class)
        };
    }
}
