package dev.kvindexer.ingest;

import com.sun.management.UnixOperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

/**
 * The default ceiling on listeners: each holds one connection, so one file descriptor, and the process's descriptor
 * limit less a reserve for everything else (HTTP clients, cluster members, replays, files) bounds how many fit.
 */
public final class ListenerCapacity {
    /** Descriptors kept for the rest of the node: an eighth of the limit, within these bounds. */
    static final long MIN_RESERVE = 512;

    static final long MAX_RESERVE = 4096;
    /** The ceiling whatever the descriptor limit: more listeners than this on one node are untried. */
    public static final int MAX_DEFAULT = 20_000;

    private ListenerCapacity() {}

    /** The ceiling for this process's descriptor limit, or {@link #MAX_DEFAULT} where the limit is unknown. */
    public static int derived() {
        return forDescriptorLimit(descriptorLimit());
    }

    /** The ceiling for a process allowed {@code limit} open descriptors ({@code limit <= 0}: unknown). */
    static int forDescriptorLimit(long limit) {
        if (limit <= 0) {
            return MAX_DEFAULT;
        }
        long reserve = Math.min(MAX_RESERVE, Math.max(MIN_RESERVE, limit / 8));
        return (int) Math.max(1, Math.min(MAX_DEFAULT, limit - reserve));
    }

    /** The process's open-descriptor limit, or -1 where the platform does not say. */
    static long descriptorLimit() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof UnixOperatingSystemMXBean unix ? unix.getMaxFileDescriptorCount() : -1;
    }
}
