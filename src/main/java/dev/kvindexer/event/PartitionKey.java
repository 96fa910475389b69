package dev.kvindexer.event;

/**
 * Identity of one partition, the same for the index, the selection service and the load accounting: a model and a
 * routing group (each API spells the group its own way: {@code routing_group}, {@code tenant_id}). Queries never
 * cross partitions. A name left out is {@value #DEFAULT}.
 */
public record PartitionKey(String modelName, String routingGroup) implements Comparable<PartitionKey> {
    public static final String DEFAULT = "default";

    public PartitionKey {
        modelName = modelName == null ? DEFAULT : modelName;
        routingGroup = routingGroup == null ? DEFAULT : routingGroup;
    }

    @Override
    public int compareTo(PartitionKey o) {
        int c = modelName.compareTo(o.modelName);
        return c != 0 ? c : routingGroup.compareTo(o.routingGroup);
    }

    /** How messages name it, in the reference's words. */
    @Override
    public String toString() {
        return "model=" + modelName + " routing_group=" + routingGroup;
    }

    /**
     * The /dump key: {@code <model_name>:<group>}, with {@code %} and {@code :} of the model name written as
     * {@code %25} and {@code %3A}. Readers split at the first {@code :} (Dynamo does too), so the group may hold any
     * character, and ("x:y", "z") and ("x", "y:z") get different keys. A model name without either character keeps
     * Dynamo's key exactly.
     */
    public String dumpKey() {
        return escapeModel(modelName) + ":" + routingGroup;
    }

    /** The key {@link #dumpKey()} wrote; null when it has no {@code :}. */
    public static PartitionKey fromDumpKey(String key) {
        int colon = key.indexOf(':');
        if (colon < 0) {
            return null;
        }
        return new PartitionKey(unescapeModel(key.substring(0, colon)), key.substring(colon + 1));
    }

    private static String escapeModel(String model) {
        if (model.indexOf('%') < 0 && model.indexOf(':') < 0) {
            return model;
        }
        return model.replace("%", "%25").replace(":", "%3A");
    }

    private static String unescapeModel(String escaped) {
        if (escaped.indexOf('%') < 0) {
            return escaped;
        }
        StringBuilder out = new StringBuilder(escaped.length());
        for (int i = 0; i < escaped.length(); i++) {
            char c = escaped.charAt(i);
            if (c == '%' && escaped.regionMatches(true, i, "%3A", 0, 3)) {
                out.append(':');
                i += 2;
            } else if (c == '%' && escaped.startsWith("%25", i)) {
                out.append('%');
                i += 2;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
