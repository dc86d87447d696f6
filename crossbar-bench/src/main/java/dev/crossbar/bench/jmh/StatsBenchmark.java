package dev.crossbar.bench.jmh;

import dev.crossbar.core.stats.ConnectionStats;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The per-delivery statistics update on the hot path ({@link ConnectionStats#recordOut}, three
 * opaque stores and the {@code nanoTime} it is given) against the same work without recording.
 */
@State(Scope.Thread)
public class StatsBenchmark extends AbstractBenchmark {

    private static final int BYTES = 4600;

    private final ConnectionStats stats = ConnectionStats.startingNow();

    @Benchmark
    public long noRecord() {
        return System.nanoTime();
    }

    @Benchmark
    public long record() {
        long now = System.nanoTime();
        stats.recordOut(BYTES, now);
        return now;
    }

    /** The stores alone, without the clock read. */
    @Benchmark
    public void recordFixedTime() {
        stats.recordOut(BYTES, 42L);
    }
}
