package dev.kvindexer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.TestPublisher;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import org.junit.jupiter.api.Test;

/**
 * What SIGTERM does ({@link IndexerNode#close()}, run by the shutdown hook): the node stops taking requests and closes
 * its engines' ZMQ sockets. (A stopped cluster node leaving the others healthy is proven in ClusterTest.)
 */
class GracefulShutdownTest {
    @Test
    void aClosedNodeRefusesConnectionsAndHasLeftItsEngines() throws Exception {
        try (TestPublisher engine = new TestPublisher()) {
            IndexerNode node = IndexerNode.start(ServeConfig.local(0));
            int port = node.httpPort();
            assertEquals(
                    201,
                    new HttpJson(port)
                            .post(
                                    "/register",
                                    "{\"instance_id\":1,\"endpoint\":\"" + engine.endpoint()
                                            + "\",\"model_name\":\"m\",\"block_size\":4}")
                            .statusCode());
            engine.awaitSubscriber();

            node.close();
            engine.awaitUnsubscribe();
            assertThrows(ConnectException.class, () -> {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
                }
            });
        }
    }
}
