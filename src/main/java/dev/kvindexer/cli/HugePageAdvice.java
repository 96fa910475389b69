package dev.kvindexer.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Says at startup when Linux offers transparent huge pages on request (madvise) and this JVM does not ask for them.
 * The index is a large pointer structure, so its query tail is set by TLB misses on 4 KB pages (BENCHMARKS.md);
 * the flag is Linux-only, which is why it cannot simply be put in every command line.
 */
final class HugePageAdvice {
    static final String FLAG = "-XX:+UseTransparentHugePages";
    private static final Path THP_MODE = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");

    private HugePageAdvice() {}

    /** The advice for this process, if any. */
    static Optional<String> forThisProcess() {
        Boolean jvmAsks = JvmOptions.bool("UseTransparentHugePages");
        if (jvmAsks == null || !Files.isReadable(THP_MODE)) {
            return Optional.empty(); // not Linux, or not HotSpot
        }
        try {
            return advice(Files.readString(THP_MODE), jvmAsks);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * @param kernelModes the kernel's THP setting as the sysfs file shows it, the selected mode in brackets:
     *                    {@code always [madvise] never}
     */
    static Optional<String> advice(String kernelModes, boolean jvmAsks) {
        int open = kernelModes.indexOf('[');
        int close = kernelModes.indexOf(']', open + 1);
        if (open < 0 || close < 0 || jvmAsks) {
            return Optional.empty();
        }
        // "always" backs the heap with huge pages anyway; "never" cannot be changed from the JVM.
        if (!kernelModes.substring(open + 1, close).equals("madvise")) {
            return Optional.empty();
        }
        return Optional.of("transparent huge pages are available on request but this JVM does not use them; start java "
                + "with " + FLAG + " for a shorter query tail (BENCHMARKS.md: 128-block match p99 8.9 -> 3.5 us)");
    }
}
