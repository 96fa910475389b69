package dev.kvindexer.cli;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Optional;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives the C heap's free memory back to the operating system every so often. glibc keeps what native users freed
 * (the JIT compiler's arenas above all, after the warm-up and again as new paths compile), so without this the resident
 * size counts memory the process no longer holds. JDK 21 does the same on a flag ({@code -XX:TrimNativeHeapInterval});
 * on 17 the JVM's diagnostic command for it is called from here, where this JVM offers one.
 */
final class NativeHeapTrim {
    private static final Logger LOG = LoggerFactory.getLogger(NativeHeapTrim.class);
    private static final String OPERATION = "systemTrimNativeHeap";

    private final MBeanServer server;
    private final ObjectName command;

    private NativeHeapTrim(MBeanServer server, ObjectName command) {
        this.server = server;
        this.command = command;
    }

    /** The trim of this JVM, or empty where it has none (before 17.0.9, not HotSpot, not on glibc). */
    static Optional<NativeHeapTrim> forThisProcess() {
        try {
            NativeHeapTrim trim = new NativeHeapTrim(
                    ManagementFactory.getPlatformMBeanServer(),
                    new ObjectName("com.sun.management:type=DiagnosticCommand"));
            String first = trim.once();
            // The command exists everywhere it was backported, and says so where the C library cannot trim.
            return first.contains("RSS") ? Optional.of(trim) : Optional.empty();
        } catch (JMException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Trims now; what the JVM reports of it (the resident size before and after). */
    String once() throws JMException {
        Object report = server.invoke(
                command, OPERATION, new Object[] {new String[0]}, new String[] {String[].class.getName()});
        return String.valueOf(report).strip();
    }

    /** Trims every {@code period} on a daemon thread of its own: cheap when there is little to give (BENCHMARKS.md). */
    void every(Duration period) {
        Thread t = new Thread(
                () -> {
                    try {
                        while (true) {
                            Thread.sleep(period.toMillis());
                            once();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (JMException | RuntimeException e) {
                        LOG.warn("native heap trimming stopped: {}", e.toString());
                    }
                },
                "kvindexer-native-heap-trim");
        t.setDaemon(true);
        t.start();
    }
}
