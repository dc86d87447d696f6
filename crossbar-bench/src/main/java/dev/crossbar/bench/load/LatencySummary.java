package dev.crossbar.bench.load;

import org.HdrHistogram.Histogram;

/**
 * Latency percentiles of a run in microseconds, from a histogram of nanoseconds; all null when
 * nothing was measured, so a run without latency never reports zeros as if they were fast.
 */
record LatencySummary(long count, Double p50Us, Double p90Us, Double p99Us, Double p999Us, Double maxUs, Double meanUs) {

    /** Highest latency recorded before clamping: a minute, longer than any bounded run. */
    static final long HIGHEST_TRACKABLE_NANOS = 60_000_000_000L;
    /** Three significant digits: 0.1% resolution at every scale. */
    static final int SIGNIFICANT_DIGITS = 3;

    static final LatencySummary EMPTY = new LatencySummary(0, null, null, null, null, null, null);

    static Histogram newHistogram() {
        return new Histogram(HIGHEST_TRACKABLE_NANOS, SIGNIFICANT_DIGITS);
    }

    static LatencySummary of(Histogram h) {
        if (h.getTotalCount() == 0) {
            return EMPTY;
        }
        return new LatencySummary(h.getTotalCount(),
                us(h.getValueAtPercentile(50)), us(h.getValueAtPercentile(90)), us(h.getValueAtPercentile(99)),
                us(h.getValueAtPercentile(99.9)), us(h.getMaxValue()), round(h.getMean() / 1000.0));
    }

    private static Double us(long nanos) {
        return round(nanos / 1000.0);
    }

    private static double round(double v) {
        return Math.round(v * 10.0) / 10.0;
    }
}
