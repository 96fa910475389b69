package dev.kvindexer.cli;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

/** Reads this JVM's own options, for startup advice about the ones production should set. */
final class JvmOptions {
    private JvmOptions() {}

    /** The value of a boolean HotSpot option, or null when this JVM has no such option (not HotSpot, not Linux). */
    static Boolean bool(String name) {
        try {
            HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            return hotspot == null
                    ? null
                    : Boolean.parseBoolean(hotspot.getVMOption(name).getValue());
        } catch (IllegalArgumentException | LinkageError e) {
            return null;
        }
    }
}
