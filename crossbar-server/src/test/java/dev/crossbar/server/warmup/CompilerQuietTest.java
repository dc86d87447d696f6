package dev.crossbar.server.warmup;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The wait for the compiler is bounded, and on a quiet compiler it is about {@link CompilerQuiet#QUIET}. */
class CompilerQuietTest {

    @Test
    void waitsForAQuietSpellAndNeverLongerThanItsBound() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            Duration waited = CompilerQuiet.await();
            assertTrue(waited.compareTo(CompilerQuiet.QUIET) >= 0, "returned before a quiet spell: " + waited);
            // The bound, plus a generous allowance for a busy machine's scheduling.
            assertTrue(waited.compareTo(CompilerQuiet.AT_MOST.plusSeconds(2)) <= 0, "waited " + waited);
        }
    }
}
