package dev.crossbar.bench.load;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * The latencies one load-generator event loop measured for one part of a run: every measured
 * message in a histogram, those sent in the first {@link #FIRST_WINDOW_NANOS} of measurement in a
 * second one (a cold relay's first seconds beside the whole), and all of them by moment of arrival
 * ({@link LatencyMoments}). Written by its loop only; read after the loops stop.
 */
final class LatencyRecorder {

    /** The start of measurement a cold run reports on its own: the first 10 s. */
    static final long FIRST_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final RunClock clock;
    private final Histogram all = LatencySummary.newHistogram();
    private final Histogram first = LatencySummary.newHistogram();
    private final LatencyMoments moments;

    /** @param spanNanos receive time the moments cover from the start of measurement */
    LatencyRecorder(RunClock clock, long spanNanos) {
        this.clock = requireNonNull(clock, "clock");
        this.moments = new LatencyMoments(spanNanos);
    }

    /**
     * Records a measured message (sent at or after the start of measurement) that arrived at
     * {@code nowNanos}; returns its latency as recorded (clamped to the histograms' range).
     */
    long record(long sentNanos, long nowNanos) {
        long nanos = Math.min(Math.max(0, nowNanos - sentNanos), all.getHighestTrackableValue());
        all.recordValue(nanos);
        long measureFrom = clock.measureFromNanos();
        if (sentNanos - measureFrom < FIRST_WINDOW_NANOS) {
            first.recordValue(nanos);
        }
        moments.record(nowNanos - measureFrom, nanos);
        return nanos;
    }

    /** Every measured message. */
    Histogram all() {
        return all;
    }

    /** Messages sent in the first {@link #FIRST_WINDOW_NANOS} of measurement. */
    Histogram first() {
        return first;
    }

    LatencyMoments moments() {
        return moments;
    }
}
