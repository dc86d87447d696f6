package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A cold run's first seconds are kept apart from the whole, by send time. */
class LatencyRecorderTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    @Test
    void messagesSentInTheFirstTenSecondsAreAlsoKeptApart() {
        RunClock clock = new RunClock();
        clock.start(0, TimeUnit.MINUTES.toNanos(1));
        long from = clock.measureFromNanos();
        LatencyRecorder r = new LatencyRecorder(clock, TimeUnit.MINUTES.toNanos(1));
        assertEquals(2 * MS, r.record(from, from + 2 * MS));
        assertEquals(3 * MS, r.record(from + LatencyRecorder.FIRST_WINDOW_NANOS - MS, from + LatencyRecorder.FIRST_WINDOW_NANOS + 2 * MS));
        assertEquals(40 * MS, r.record(from + LatencyRecorder.FIRST_WINDOW_NANOS, from + LatencyRecorder.FIRST_WINDOW_NANOS + 40 * MS));
        assertEquals(3, r.all().getTotalCount());
        assertEquals(2, r.first().getTotalCount(), "the one sent at 10 s is past the first window");
        assertEquals(40 * MS, r.all().getMaxValue(), 40 * MS / 500.0);
        assertEquals(3 * MS, r.first().getMaxValue(), 3 * MS / 500.0);
    }

    @Test
    void aMessageFromTheClockAheadCountsAsNoWaitAndAStuckOneAsTheLongestKept() {
        RunClock clock = new RunClock();
        clock.start(0, TimeUnit.MINUTES.toNanos(1));
        long from = clock.measureFromNanos();
        LatencyRecorder r = new LatencyRecorder(clock, TimeUnit.SECONDS.toNanos(1));
        assertEquals(0, r.record(from + 5 * MS, from + 4 * MS));
        assertEquals(LatencySummary.HIGHEST_TRACKABLE_NANOS,
                r.record(from, from + 2 * LatencySummary.HIGHEST_TRACKABLE_NANOS));
    }
}
