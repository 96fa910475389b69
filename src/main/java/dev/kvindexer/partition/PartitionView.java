package dev.kvindexer.partition;

/**
 * A handle whose queries are answered by other nodes too, such as a sharded partition's scatter; everything else is the
 * partition hosted on this node, which {@link PartitionHost} deploys and stops.
 */
public interface PartitionView extends PartitionRef {
    /** The partition this node hosts. */
    PartitionRef hosted();

    /** The partition behind a handle that may be a view: what queries of this node alone go to. */
    static PartitionRef hostedOf(PartitionRef ref) {
        return ref instanceof PartitionView view ? view.hosted() : ref;
    }
}
