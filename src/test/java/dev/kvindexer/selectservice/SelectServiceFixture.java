package dev.kvindexer.selectservice;

import dev.kvindexer.cli.SelectServiceCommand;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.support.HttpJson;
import java.util.Map;

/** A real indexer node with the selection service deployed on it, on loopback. */
final class SelectServiceFixture implements AutoCloseable {
    final IndexerNode node;
    final SelectServiceVerticle service;
    final HttpJson http;

    private SelectServiceFixture(IndexerNode node, SelectServiceVerticle service) {
        this.node = node;
        this.service = service;
        this.http = new HttpJson(service.actualPort());
    }

    /** @param env Dynamo's router environment for this service */
    static SelectServiceFixture start(Map<String, String> env) throws Exception {
        return start(env, SelectServiceConfig.on("127.0.0.1", 0));
    }

    static SelectServiceFixture start(Map<String, String> env, SelectServiceConfig config) throws Exception {
        return start(env, config, ServeConfig.local(0));
    }

    /** Over an indexer node of {@code indexer}'s settings. */
    static SelectServiceFixture start(Map<String, String> env, SelectServiceConfig config, ServeConfig indexer)
            throws Exception {
        IndexerNode node = IndexerNode.start(indexer);
        try {
            return new SelectServiceFixture(
                    node, SelectServiceCommand.deploy(node, config, SelectionConfig.fromEnvironment(env)));
        } catch (Exception e) {
            node.close();
            throw e;
        }
    }

    /** Registers worker {@code id} of model {@code model}, block size 4, at {@code http://worker-<id>:8000}. */
    static void registerWorker(HttpJson http, long id) {
        SelectServicePerTest.ok(
                201,
                http.post(
                        "/workers",
                        "{\"worker_id\":" + id + ",\"model_name\":\"model\",\"endpoint\":\"http://worker-" + id
                                + ":8000\",\"block_size\":4}"));
    }

    @Override
    public void close() {
        node.close();
    }
}
