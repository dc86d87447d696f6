package dev.crossbar.bench.load;

/**
 * The phases of one run on the {@link System#nanoTime()} scale: warm-up until
 * {@link #measureFromNanos()}, measurement until {@link #stopNanos()}, when senders stop.
 * Set once by the run before any message is sent; read by every loop.
 */
final class RunClock {

    private volatile long measureFromNanos = Long.MAX_VALUE;
    private volatile long stopNanos = Long.MAX_VALUE;

    void start(long warmupNanos, long durationNanos) {
        long now = System.nanoTime();
        measureFromNanos = now + warmupNanos;
        stopNanos = now + warmupNanos + durationNanos;
    }

    /** Messages sent from here on count for latency; before, they only warm up. */
    long measureFromNanos() {
        return measureFromNanos;
    }

    /** Senders send nothing from here on. */
    long stopNanos() {
        return stopNanos;
    }
}
