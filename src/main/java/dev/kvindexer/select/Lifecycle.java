package dev.kvindexer.select;

import java.util.Locale;

/** A catalog worker's state (docs/api/selection.md#the-catalog-record); only schedulable workers take part in selection. */
public enum Lifecycle {
    INCOMPLETE,
    SCHEDULABLE,
    DRAINING,
    UNSCHEDULABLE;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }
}
