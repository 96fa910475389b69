package dev.kvindexer.select;

/** A selection partition (SPEC §12.1): one index, one active-load tracker and one scheduler per model and group. */
public record Partition(String modelName, String routingGroup) implements Comparable<Partition> {
    public static final String DEFAULT = "default";

    public Partition {
        modelName = modelName == null ? DEFAULT : modelName;
        routingGroup = routingGroup == null ? DEFAULT : routingGroup;
    }

    @Override
    public int compareTo(Partition o) {
        int c = modelName.compareTo(o.modelName);
        return c != 0 ? c : routingGroup.compareTo(o.routingGroup);
    }

    /** How messages name it. */
    @Override
    public String toString() {
        return "model=" + modelName + " routing_group=" + routingGroup;
    }
}
