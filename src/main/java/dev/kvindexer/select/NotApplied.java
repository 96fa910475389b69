package dev.kvindexer.select;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Newer Dynamo selection features a request or the configuration may name that this service accepts but does not
 * apply (docs/api/selection.md#accepted-but-not-applied). Each is logged once per process: an operator learns of it
 * without a line per request, and a router that sends it is not refused.
 */
public final class NotApplied {
    private static final Logger LOG = LoggerFactory.getLogger(NotApplied.class);
    private static final Set<String> REPORTED = ConcurrentHashMap.newKeySet();

    /** The request header naming a policy class. */
    public static final String POLICY_CLASS_HEADER = "x-dynamo-meta-policy-class";

    private NotApplied() {}

    /** Logs that {@code feature} is not applied, the first time only; true when this call logged it. */
    public static boolean report(String feature, String instead) {
        if (!REPORTED.add(feature)) {
            return false;
        }
        LOG.warn("{} is accepted but not applied: {}", feature, instead);
        return true;
    }
}
