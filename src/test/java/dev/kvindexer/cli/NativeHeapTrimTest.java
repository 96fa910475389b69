package dev.kvindexer.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Optional;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

/** The native heap is trimmed through the JVM's own diagnostic command where it has one, and nothing breaks where not. */
class NativeHeapTrimTest {

    @Test
    void trimsWhereTheJvmOffersItAndReportsTheResidentSize() throws Exception {
        boolean offered = Arrays.stream(ManagementFactory.getPlatformMBeanServer()
                        .getMBeanInfo(new ObjectName("com.sun.management:type=DiagnosticCommand"))
                        .getOperations())
                .anyMatch(o -> o.getName().equals("systemTrimNativeHeap"));
        Optional<NativeHeapTrim> trim = NativeHeapTrim.forThisProcess();
        if (!offered) {
            assertEquals(Optional.empty(), trim, "no trim where the JVM has no such command");
            return;
        }
        String direct = String.valueOf(ManagementFactory.getPlatformMBeanServer()
                .invoke(
                        new ObjectName("com.sun.management:type=DiagnosticCommand"),
                        "systemTrimNativeHeap",
                        new Object[] {new String[0]},
                        new String[] {String[].class.getName()}));
        // Where the C library can trim, the command reports the resident size before and after, and so must ours.
        assertEquals(direct.contains("RSS"), trim.isPresent(), direct);
        if (trim.isPresent()) {
            String report = trim.get().once();
            assertTrue(report.startsWith("Trim native heap"), report);
        }
    }
}
