package dev.kvindexer.web;

import java.util.List;

/**
 * Whether the node can serve, composed from each component's own check rather than one shared status: /ready
 * answers 503 with the first problem a check reports, in the order the checks were given.
 */
public final class Readiness {
    /** One component's answer: null when it can serve, else why it cannot. */
    @FunctionalInterface
    public interface Check {
        String problem();
    }

    private final List<Check> checks;

    public Readiness(List<Check> checks) {
        this.checks = List.copyOf(checks);
    }

    /** The first problem a check reports, or null when the node is ready. */
    public String notReadyReason() {
        for (Check c : checks) {
            String problem = c.problem();
            if (problem != null) {
                return problem;
            }
        }
        return null;
    }
}
