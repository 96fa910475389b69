package dev.kvindexer.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The startup hint appears only where the JVM flag would change something. */
class HugePageAdviceTest {
    @Test
    void advisesTheFlagWhenTheKernelGivesHugePagesOnRequestAndTheJvmDoesNotAsk() {
        Optional<String> advice = HugePageAdvice.advice("always [madvise] never\n", false);
        assertTrue(advice.isPresent());
        assertTrue(advice.get().contains(HugePageAdvice.FLAG), advice.get());
    }

    @Test
    void saysNothingWhenTheFlagWouldChangeNothing() {
        assertEquals(Optional.empty(), HugePageAdvice.advice("always [madvise] never\n", true), "the JVM already asks");
        assertEquals(
                Optional.empty(),
                HugePageAdvice.advice("[always] madvise never\n", false),
                "the kernel gives them anyway");
        assertEquals(
                Optional.empty(), HugePageAdvice.advice("always madvise [never]\n", false), "switched off by the host");
    }

    @Test
    void saysNothingWhenTheSettingCannotBeRead() {
        assertEquals(Optional.empty(), HugePageAdvice.advice("", false));
        assertEquals(Optional.empty(), HugePageAdvice.advice("madvise", false));
        assertEquals(Optional.empty(), HugePageAdvice.advice("always [madvise never", false));
    }

    @Test
    void readsThisProcessWithoutFailing() {
        // Whatever the machine, asking must not throw; on Linux with the flag given it must stay quiet.
        Optional<String> advice = HugePageAdvice.forThisProcess();
        assertTrue(advice.isEmpty() || advice.get().contains(HugePageAdvice.FLAG));
    }
}
