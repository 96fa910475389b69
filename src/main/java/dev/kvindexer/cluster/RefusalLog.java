package dev.kvindexer.cluster;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;

/**
 * Logs what a node refused from the network: at warn the first time for each kind, at debug after that, so that a
 * peer sending the same bad thing a million times fills the counters and not the log.
 */
final class RefusalLog {
    private final Logger log;
    private final Set<String> seen = ConcurrentHashMap.newKeySet();

    RefusalLog(Logger log) {
        this.log = log;
    }

    /** {@code message} is an SLF4J pattern with {@code args}. */
    void refused(String kind, String message, Object... args) {
        if (seen.add(kind)) {
            log.atWarn().log(message + " (further ones are logged at debug)", args);
        } else {
            log.atDebug().log(message, args);
        }
    }
}
