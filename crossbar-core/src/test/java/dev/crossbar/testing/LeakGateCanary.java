package dev.crossbar.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Proves the leak gate can fail, in whichever module calls it: deliberately leaking classes run in
 * a JUnit launcher session of their own (same class path, so the same auto-detected
 * {@link LeakCheck} and {@link LeakCheckSessionListener} as the module's real tests), and the
 * canary asserts that session failed. Each module has a {@code LeakGateCanaryTest} calling it.
 */
public final class LeakGateCanary {

    /** Rounds of {@link LeakRecorder#collect()} to wait for the GC; the deliberate leaks are certain. */
    private static final int ROUNDS = 40;

    /** The cases below do nothing unless a canary runs them (Surefire skips nested classes anyway). */
    private static volatile boolean armed;
    /** A buffer kept reachable past its class's end, then dropped without a release. */
    private static volatile ByteBuf held;

    private LeakGateCanary() {
    }

    /** A test that leaks a buffer: its class must fail. */
    public static void assertALeakInATestFailsItsClass() {
        TestExecutionSummary summary = runAlone(LeakingCase.class).summary;
        assertLeakFailure(summary, "buffer leak(s) in LeakGateCanary$LeakingCase");
    }

    /** A leak reported only when a later class starts fails that class rather than vanishing. */
    public static void assertALateReportFailsTheNextClass() {
        leakOne();
        assertTrue(LeakRecorder.collectUntilReported(ROUNDS), "the deliberate leak was never reported");
        TestExecutionSummary summary = runAlone(CleanCase.class).summary;
        assertLeakFailure(summary, "reported before LeakGateCanary$CleanCase started");
    }

    /** A leak reported after the last class of a session fails the session when it closes. */
    public static void assertALeakAfterTheLastClassFailsTheRun() {
        Outcome outcome = runAlone(HoldingCase.class, () -> {
            held = null; // unreachable and never released: reported from here on
            assertTrue(LeakRecorder.collectUntilReported(ROUNDS), "the deliberate leak was never reported");
        });
        assertEquals(0, outcome.summary.getTotalFailureCount(), "the holding class itself is clean");
        assertEquals(1, outcome.summary.getTestsSucceededCount(), "the holding class ran");
        assertNotNull(outcome.closeFailure, "the session closed without failing on the late leak");
        String message = String.valueOf(outcome.closeFailure.getMessage());
        assertTrue(message.contains("reported after the last test class"), message);
        assertTrue(message.contains(LeakGateCanary.class.getSimpleName()), "the report shows where: " + message);
    }

    private static void assertLeakFailure(TestExecutionSummary summary, String expected) {
        List<String> messages = summary.getFailures().stream()
                .map(f -> String.valueOf(f.getException().getMessage()))
                .collect(Collectors.toList());
        assertEquals(1, messages.size(), "one failure expected: " + messages);
        assertTrue(messages.get(0).contains(expected), messages.get(0));
        assertTrue(messages.get(0).contains(LeakGateCanary.class.getSimpleName()),
                "the report shows where the buffer was made: " + messages.get(0));
    }

    private record Outcome(TestExecutionSummary summary, Throwable closeFailure) {
    }

    private static Outcome runAlone(Class<?> testClass) {
        return runAlone(testClass, () -> { });
    }

    /** Runs {@code testClass} in a session of its own, then {@code beforeClose}, then closes the session. */
    private static Outcome runAlone(Class<?> testClass, Runnable beforeClose) {
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        Throwable closeFailure = null;
        armed = true;
        try {
            LauncherSession session = LauncherFactory.openSession();
            try {
                session.getLauncher().execute(LauncherDiscoveryRequestBuilder.request()
                        .selectors(selectClass(testClass)).build(), listener);
                beforeClose.run();
            } finally {
                try {
                    session.close();
                } catch (Throwable t) {
                    closeFailure = t;
                }
            }
        } finally {
            armed = false;
            held = null;
        }
        return new Outcome(listener.getSummary(), closeFailure);
    }

    private static void leakOne() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(16);
        b.writeLong(42);
    }

    /** Leaks one buffer and waits until it is reported, so only the gate decides the outcome. */
    public static final class LeakingCase {
        @Test
        void leaks() {
            assumeTrue(armed, "only run by LeakGateCanary");
            leakOne();
            assertTrue(LeakRecorder.collectUntilReported(ROUNDS), "the deliberate leak was never reported");
        }
    }

    /** Does nothing: fails only if the gate blames it for an earlier leak. */
    public static final class CleanCase {
        @Test
        void nothing() {
            assumeTrue(armed, "only run by LeakGateCanary");
        }
    }

    /** Keeps a buffer reachable past its own end; the canary drops it after the class finished. */
    public static final class HoldingCase {
        @Test
        void holds() {
            assumeTrue(armed, "only run by LeakGateCanary");
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(16);
            b.writeLong(7);
            held = b;
        }
    }
}
