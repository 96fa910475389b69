package dev.kvindexer.config;

import dev.kvindexer.zmq.ZmqEndpoint;
import java.util.ArrayList;
import java.util.List;

/** One {@code --workers} entry: {@code instance_id[:dp_rank]=endpoint} (docs/api/dynamo.md#command-line). */
public record WorkerSpec(long workerId, int dpRank, String endpoint) {

    /** Parses the comma-separated list; throws IllegalArgumentException naming the bad entry. */
    public static List<WorkerSpec> parseList(String spec) {
        List<WorkerSpec> out = new ArrayList<>();
        if (spec == null || spec.isBlank()) {
            return out;
        }
        for (String raw : spec.split(",")) {
            out.add(parse(raw.trim()));
        }
        return out;
    }

    static WorkerSpec parse(String entry) {
        int eq = entry.indexOf('=');
        if (eq <= 0 || eq == entry.length() - 1) {
            throw new IllegalArgumentException(
                    "invalid worker entry `" + entry + "`: expected instance_id[:dp_rank]=endpoint");
        }
        String id = entry.substring(0, eq).trim();
        String endpoint = entry.substring(eq + 1).trim();
        int colon = id.indexOf(':');
        long instance;
        int rank = 0;
        try {
            instance = Long.parseUnsignedLong(colon < 0 ? id : id.substring(0, colon));
            if (colon >= 0) {
                rank = Integer.parseInt(id.substring(colon + 1));
                if (rank < 0) {
                    throw new NumberFormatException("negative dp_rank");
                }
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid worker entry `" + entry + "`: " + e.getMessage());
        }
        String refusal = ZmqEndpoint.invalidMessage(endpoint);
        if (refusal != null) {
            throw new IllegalArgumentException(refusal);
        }
        return new WorkerSpec(instance, rank, endpoint);
    }
}
