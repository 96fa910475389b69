package dev.kvindexer.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What the process does with an error no thread handled. */
class FatalErrorsTest {
    private final List<String> calls = new ArrayList<>();
    private final Thread.UncaughtExceptionHandler handler =
            FatalErrors.handler(s -> calls.add("halt " + s), s -> calls.add("exit " + s));

    @Test
    void aVirtualMachineErrorHaltsAtOnce() {
        handler.uncaughtException(new Thread("kvindexer-ingest-0"), new OutOfMemoryError("Java heap space"));
        handler.uncaughtException(new Thread("vert.x-eventloop-thread-0"), new StackOverflowError());
        assertEquals(List.of("halt 70", "halt 70"), calls);
    }

    @Test
    void anotherErrorExitsThroughTheShutdownHooks() {
        handler.uncaughtException(new Thread("kvindexer-access-log"), new AssertionError("broken invariant"));
        assertEquals(List.of("exit 70"), calls);
    }

    @Test
    void anExceptionThatEndsAThreadIsOnlyLogged() {
        handler.uncaughtException(new Thread("kvindexer-replay-0"), new IllegalStateException("one replay failed"));
        assertEquals(List.of(), calls);
    }

    @Test
    void warnsOnlyWhenTheJvmWouldNotExitOnAnExhaustedHeap() {
        Optional<String> advice = FatalErrors.outOfMemoryAdvice(false);
        assertTrue(advice.isPresent() && advice.get().contains(FatalErrors.EXIT_ON_OUT_OF_MEMORY));
        assertEquals(Optional.empty(), FatalErrors.outOfMemoryAdvice(true));
        assertEquals(Optional.empty(), FatalErrors.outOfMemoryAdvice(null), "not HotSpot: nothing to say");
    }
}
