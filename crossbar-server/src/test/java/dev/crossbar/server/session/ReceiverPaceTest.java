package dev.crossbar.server.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The pace a max-latency receiver is judged by: measured while messages wait, forgotten when old. */
class ReceiverPaceTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long UNKNOWN = -1;

    @Test
    void unknownUntilMessagesHaveWaitedLongEnough() {
        ReceiverPace pace = new ReceiverPace();
        pace.observe(0, 0);
        assertEquals(UNKNOWN, pace.nanosFor(1000, UNKNOWN), "nothing waited yet");
        pace.backlogged(true);
        pace.observe(1_000, 10 * MS);
        assertEquals(UNKNOWN, pace.nanosFor(1000, UNKNOWN), "10 ms is under the 50 ms sample");
        pace.observe(10_000, 100 * MS); // 10,000 bytes in 100 ms: 100 bytes a millisecond
        assertNear(10 * MS, pace.nanosFor(1_000, UNKNOWN));
    }

    @Test
    void onlyTimeWithMessagesWaitingCounts() {
        ReceiverPace pace = new ReceiverPace();
        pace.observe(0, 0);
        pace.backlogged(true);
        pace.observe(10_000, 100 * MS);
        pace.backlogged(false);
        pace.observe(10_500, 900 * MS); // idle: the receiver had nothing to read, its pace is not this
        assertNear(10 * MS, pace.nanosFor(1_000, UNKNOWN));
    }

    @Test
    void aSlowMomentIsForgottenOnceNothingHasWaitedForTheWindow() {
        ReceiverPace pace = new ReceiverPace();
        pace.observe(0, 0);
        pace.backlogged(true);
        pace.observe(1_000, 100 * MS); // a stall: 10 bytes a millisecond
        pace.backlogged(false);
        long later = 100 * MS + ReceiverPace.WINDOW_NANOS;
        pace.observe(1_000, later);
        assertNear(100 * MS, pace.nanosFor(1_000, UNKNOWN)); // within the window the slow pace stands
        pace.observe(1_000, later + 2 * MS);
        assertEquals(UNKNOWN, pace.nanosFor(1_000, UNKNOWN), "past it, the pace is measured afresh");

        pace.observe(1_000, later + 10 * MS); // a message arrives, and waits
        pace.backlogged(true);
        pace.observe(101_000, later + 110 * MS); // 1,000 bytes a millisecond
        assertNear(MS, pace.nanosFor(1_000, UNKNOWN));
    }

    /** Within a microsecond: the pace is a rate in floating point. */
    private static void assertNear(long expected, long actual) {
        assertEquals(expected, actual, 1_000.0);
    }
}
