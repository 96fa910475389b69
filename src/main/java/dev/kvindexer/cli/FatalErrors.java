package dev.kvindexer.cli;

import java.util.Optional;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process's answer to an error that no thread handled: log it and exit non-zero, so whatever supervises the
 * process (Kubernetes, systemd) starts a whole one instead of leaving a zombie that holds its port and ignores
 * SIGTERM. Exceptions that end a thread are only logged: the threads that matter recover from those themselves.
 */
public final class FatalErrors {
    private static final Logger LOG = LoggerFactory.getLogger(FatalErrors.class);
    /** EX_SOFTWARE: an internal error. */
    public static final int EXIT_STATUS = 70;

    static final String EXIT_ON_OUT_OF_MEMORY = "-XX:+ExitOnOutOfMemoryError";

    private FatalErrors() {}

    /**
     * The handler, exiting through {@code exit}. A {@link VirtualMachineError} (out of memory, stack overflow, an
     * internal JVM error) leaves nothing trustworthy to shut down with, so it halts at once; another error runs the
     * shutdown hooks first, which close the node within their own budget.
     */
    public static Thread.UncaughtExceptionHandler handler(IntConsumer halt, IntConsumer exit) {
        return (thread, error) -> {
            if (!(error instanceof Error)) {
                LOG.error("thread {} ended by an uncaught exception", thread.getName(), error);
                return;
            }
            try {
                LOG.error("fatal error in thread {}; exiting with status {}", thread.getName(), EXIT_STATUS, error);
            } finally {
                if (error instanceof VirtualMachineError) {
                    halt.accept(EXIT_STATUS);
                } else {
                    exit.accept(EXIT_STATUS);
                }
            }
        };
    }

    /**
     * A warning when this JVM lacks {@code -XX:+ExitOnOutOfMemoryError}: once the heap is full nothing in Java can be
     * relied on to exit, not even {@code Runtime.halt}, so only the JVM itself can end the process then.
     */
    static Optional<String> outOfMemoryAdvice(Boolean exitsOnOutOfMemory) {
        if (exitsOnOutOfMemory == null || exitsOnOutOfMemory) {
            return Optional.empty();
        }
        return Optional.of("this JVM does not exit when its heap is exhausted; start java with " + EXIT_ON_OUT_OF_MEMORY
                + " in production, so the process is restarted instead of lingering");
    }

    static Optional<String> outOfMemoryAdviceForThisProcess() {
        return outOfMemoryAdvice(JvmOptions.bool("ExitOnOutOfMemoryError"));
    }

    /** Makes this the default handler of every thread of the process. */
    public static void install() {
        Thread.setDefaultUncaughtExceptionHandler(handler(Runtime.getRuntime()::halt, System::exit));
    }
}
