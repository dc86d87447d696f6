package dev.crossbar.bench.load;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Latency by moment of arrival: for every {@link #MOMENT_NANOS} of receive time from the start of
 * measurement, how many measured messages arrived, their mean latency and the slowest. Why: a
 * percentile says how long the tail is, not what it is made of. Deliveries arriving in the same
 * few milliseconds with very different ages mean some receivers are served later than others (a
 * relay's threads out of step); the same ages everywhere and then a jump mean the whole relay
 * paused. The {@linkplain #spread spread} tells the two apart in one figure per run.
 *
 * <p>One instance per load-generator event loop (written by that loop only, like its latency
 * histogram); {@link #add} merges them after the run. Three longs a moment: a 10-minute run with
 * its drain is ~2.9 MiB per loop.
 */
final class LatencyMoments {

    /** One moment: short against a closed loop's latency (~10 ms), long enough to hold many deliveries. */
    static final long MOMENT_NANOS = 5_000_000;
    /** Moments with fewer deliveries say little about spread, so {@link #spread} skips them. */
    static final int MIN_DELIVERIES = 10;

    private final long[] count;
    private final long[] sumNanos;
    private final long[] maxNanos;

    /** @param spanNanos receive time covered from the start of measurement; later arrivals are not kept */
    LatencyMoments(long spanNanos) {
        int n = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(1, (spanNanos + MOMENT_NANOS - 1) / MOMENT_NANOS));
        this.count = new long[n];
        this.sumNanos = new long[n];
        this.maxNanos = new long[n];
    }

    /** A measured message arrived {@code sinceMeasureNanos} after measurement began, {@code latencyNanos} old. */
    void record(long sinceMeasureNanos, long latencyNanos) {
        long i = sinceMeasureNanos / MOMENT_NANOS;
        if (sinceMeasureNanos < 0 || i >= count.length) {
            return;
        }
        int m = (int) i;
        count[m]++;
        sumNanos[m] += latencyNanos;
        if (latencyNanos > maxNanos[m]) {
            maxNanos[m] = latencyNanos;
        }
    }

    /** Adds {@code other}'s moments to these (same span). */
    void add(LatencyMoments other) {
        int n = Math.min(count.length, other.count.length);
        for (int i = 0; i < n; i++) {
            count[i] += other.count[i];
            sumNanos[i] += other.sumNanos[i];
            maxNanos[i] = Math.max(maxNanos[i], other.maxNanos[i]);
        }
    }

    /**
     * The slowest delivery of a moment over that moment's mean, at {@code quantile} (0..1) across
     * the moments with at least {@link #MIN_DELIVERIES}; null if there are none. 1.0: every
     * delivery of a moment was as old as the others.
     */
    Double spread(double quantile) {
        double[] ratios = new double[count.length];
        int n = 0;
        for (int i = 0; i < count.length; i++) {
            if (count[i] >= MIN_DELIVERIES && sumNanos[i] > 0) {
                ratios[n++] = maxNanos[i] / ((double) sumNanos[i] / count[i]);
            }
        }
        if (n == 0) {
            return null;
        }
        Arrays.sort(ratios, 0, n);
        double v = ratios[(int) Math.round(quantile * (n - 1))];
        return Math.round(v * 100.0) / 100.0;
    }

    /**
     * Writes one line per moment with deliveries: milliseconds from the start of measurement,
     * deliveries, mean and slowest in µs. The first line gives that start on the
     * {@link System#nanoTime()} clock (CLOCK_MONOTONIC on Linux), so a trace can be laid beside
     * other recordings of the same run (threads' placement, perf, a relay's own log).
     */
    void write(Path file, long measureFromNanos) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
            w.println("# measurement from " + measureFromNanos + " ns (System.nanoTime, CLOCK_MONOTONIC on Linux)");
            w.println("# ms\tdeliveries\tmeanUs\tmaxUs");
            for (int i = 0; i < count.length; i++) {
                if (count[i] > 0) {
                    w.println(i * (MOMENT_NANOS / 1_000_000) + "\t" + count[i] + "\t"
                            + Math.round(sumNanos[i] / (double) count[i] / 1000.0) + "\t" + Math.round(maxNanos[i] / 1000.0));
                }
            }
        }
    }
}
