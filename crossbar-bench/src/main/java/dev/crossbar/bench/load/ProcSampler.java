package dev.crossbar.bench.load;

import java.io.IOException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Samples a process's {@link ProcStats} in the background so its peak RSS during a run is known,
 * even for a process whose VmHWM started before the run.
 */
final class ProcSampler implements AutoCloseable {

    /** Often enough to catch a burst of buffering, rarely enough to cost nothing. */
    static final long PERIOD_MILLIS = 100;

    private final String pid;
    private final ScheduledExecutorService timer;
    private volatile long peakRssKb;
    private volatile IOException failure;

    ProcSampler(long pid) {
        this.pid = Long.toString(pid);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-proc-sampler");
            t.setDaemon(true);
            return t;
        });
        sample();
        timer.scheduleAtFixedRate(this::sample, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void sample() {
        try {
            ProcStats s = ProcStats.read(pid);
            if (s.rssKb() > peakRssKb) {
                peakRssKb = s.rssKb();
            }
        } catch (IOException e) {
            failure = e;
        }
    }

    /** A reading now. */
    /** CPU seconds the relay's JIT compiler threads have used so far (0 for a relay without them). */
    double compilerCpuSeconds() throws IOException {
        return ProcStats.compilerTicks(pid) / (double) ProcStats.TICKS_PER_SECOND;
    }

    ProcStats now() throws IOException {
        return ProcStats.read(pid);
    }

    /** Forgets the peak so far: the next peak is of what follows. */
    void resetPeak() {
        peakRssKb = 0;
        sample();
    }

    long peakRssKb() {
        return peakRssKb;
    }

    /** The last read failure (the process went away), or null. */
    IOException failure() {
        return failure;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
