package dev.kvindexer.select;

import java.util.Locale;

/** A catalog worker's state (SPEC §12.3.5); only schedulable workers take part in selection. */
public enum Lifecycle {
    INCOMPLETE,
    SCHEDULABLE,
    DRAINING,
    UNSCHEDULABLE;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }
}
