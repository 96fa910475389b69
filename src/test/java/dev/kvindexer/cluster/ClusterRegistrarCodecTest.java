package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.partition.PartitionKey;
import dev.kvindexer.registry.InstanceIds;
import dev.kvindexer.registry.Publisher;
import dev.kvindexer.registry.RegisterRequest;
import org.junit.jupiter.api.Test;

/** A registration survives the cluster map unchanged, so every node registers exactly what was asked. */
class ClusterRegistrarCodecTest {
    @Test
    void dynamoAndMooncakeRegistrationsRoundTrip() {
        RegisterRequest dynamo = new RegisterRequest(-1L, 3, "tcp://h:5557", null, new PartitionKey("m", "default"), 16);
        RegisterRequest mooncake = new RegisterRequest(InstanceIds.of("vllm-prefill-node1"), 0, "tcp://h:5557",
                "tcp://h:5558", new PartitionKey("deepseek", "acme"), 128,
                new Publisher("vllm-prefill-node1", "vLLM", "sql-adapter", "w8a8"));
        assertEquals(dynamo, ClusterRegistrar.decode(ClusterRegistrar.encode(dynamo)));
        assertEquals(mooncake, ClusterRegistrar.decode(ClusterRegistrar.encode(mooncake)));
        assertEquals("18446744073709551615:3", ClusterRegistrar.key(-1L, 3));
    }
}
