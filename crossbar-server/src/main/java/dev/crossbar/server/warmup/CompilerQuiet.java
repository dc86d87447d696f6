package dev.crossbar.server.warmup;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * Waits for the JIT compiler to go quiet: its total compilation time unchanged for {@link #QUIET},
 * or {@link #AT_MOST} at the most, so that the warm-up never holds the relay's start for long. On a
 * JVM that does not report compilation time it waits {@link #QUIET} once.
 */
final class CompilerQuiet {

    /** No compilation finishing for this long counts as quiet: C2 compiles most methods in less. */
    static final Duration QUIET = Duration.ofMillis(150);
    static final Duration AT_MOST = Duration.ofSeconds(3);
    private static final long POLL_MILLIS = 10;

    private CompilerQuiet() {
    }

    /** Blocks until the compiler is quiet or {@link #AT_MOST} has passed; returns how long it waited. */
    static Duration await() throws InterruptedException {
        long start = System.nanoTime();
        CompilationMXBean compiler = ManagementFactory.getCompilationMXBean();
        if (compiler == null || !compiler.isCompilationTimeMonitoringSupported()) {
            Thread.sleep(QUIET.toMillis());
            return Duration.ofNanos(System.nanoTime() - start);
        }
        long deadline = start + AT_MOST.toNanos();
        long last = compiler.getTotalCompilationTime();
        long quietSince = System.nanoTime();
        while (System.nanoTime() - quietSince < QUIET.toNanos() && System.nanoTime() < deadline) {
            Thread.sleep(POLL_MILLIS);
            long now = compiler.getTotalCompilationTime();
            if (now != last) {
                last = now;
                quietSince = System.nanoTime();
            }
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }
}
