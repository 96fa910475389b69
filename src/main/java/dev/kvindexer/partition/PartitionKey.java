package dev.kvindexer.partition;

/** Identity of one index partition: (model_name, tenant/routing group). Queries never cross partitions. */
public record PartitionKey(String modelName, String tenantId) {
    public static final String DEFAULT_TENANT = "default";

    /** The /dump key: {@code <model_name>:<group>}. */
    public String dumpKey() {
        return modelName + ":" + tenantId;
    }
}
