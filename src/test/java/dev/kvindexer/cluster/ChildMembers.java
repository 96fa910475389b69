package dev.kvindexer.cluster;

import dev.kvindexer.support.ChildNode;
import dev.kvindexer.support.ClusterNodes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Members of a test cluster in JVMs of their own (so they can be SIGKILLed), with their logs for a failure report. */
final class ChildMembers implements AutoCloseable {
    private final Path logs;
    private final ClusterNodes cluster;
    private final List<ChildNode> children = new ArrayList<>();

    ChildMembers(Path logs, ClusterNodes cluster) {
        this.logs = logs;
        this.cluster = cluster;
    }

    /** Starts a member that reconciles every second; {@code extra} flags are added to its command line. */
    ChildNode start(String name, String... extra) {
        return start(name, java.util.Map.of(), extra);
    }

    /** As {@link #start(String, String...)} with {@code env} added to the member's environment. */
    ChildNode start(String name, java.util.Map<String, String> env, String... extra) {
        List<String> args = new ArrayList<>(cluster.childFlags());
        args.addAll(List.of("--threads", "2", "--ingest-threads", "1"));
        args.addAll(List.of(extra));
        ChildNode c = ChildNode.start(logs, name, ChildNode.SMALL_JVM, args, env);
        synchronized (children) {
            children.add(c);
        }
        return c;
    }

    List<ChildNode> all() {
        synchronized (children) {
            return List.copyOf(children);
        }
    }

    /** The tail of every member's log. */
    String logs() {
        StringBuilder sb = new StringBuilder();
        all().forEach(c -> sb.append("\n--- child log:\n").append(c.tail()));
        return sb.toString();
    }

    @Override
    public void close() {
        all().forEach(ChildNode::close);
    }
}
