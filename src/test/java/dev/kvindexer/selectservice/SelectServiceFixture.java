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

    @Override
    public void close() {
        node.close();
    }
}
