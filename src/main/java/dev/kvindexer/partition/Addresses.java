package dev.kvindexer.partition;

/** Every event-bus address the node uses is built here, never spelled inline. */
public final class Addresses {
    private static final String PARTITION_PREFIX = "kvindexer.partition.";

    private Addresses() {
    }

    /**
     * Address of one partition incarnation. The incarnation number makes a partition re-created after
     * its last worker left a distinct consumer, so a slow undeploy never shares an address with it.
     */
    public static String partition(long incarnation) {
        return PARTITION_PREFIX + incarnation;
    }
}
