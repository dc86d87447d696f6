package dev.crossbar.server.health;

import dev.crossbar.core.relay.Member;
import dev.crossbar.core.relay.PreparedFrame;
import dev.crossbar.core.route.Route;
import dev.crossbar.core.stats.ConnectionStats;
import io.netty.util.concurrent.EventExecutor;

/**
 * The receiving end of the liveness probe on one event loop: a {@link Member} living on that loop,
 * as a relay session does, so a probe reaches it through the loop's fan-out queue and drain task.
 * It writes nothing: a delivery records when the probe arrived and how long it took.
 *
 * <p>Thread use: {@link #deliver} runs on the loop; {@link #sent} on the prober's thread; the
 * readers (health, metrics) on any thread. Each field has one writer and is volatile.
 *
 * <p>Ownership: the frame is borrowed and not kept, so nothing is retained or released here.
 */
final class LoopProbe implements Member {

    private final EventExecutor loop;
    private final int index;
    private final String name;
    private final ConnectionStats stats = ConnectionStats.startingNow();
    /** {@link System#nanoTime()} when the probe in flight was sent; 0 when none is in flight. */
    private volatile long inFlightSince;
    /** {@link System#nanoTime()} when this loop last delivered a probe (or when probing began). */
    private volatile long lastMovedNanos;
    /** {@link System#currentTimeMillis()} of the same moment, for the reason /healthz gives. */
    private volatile long lastMovedMillis;
    private volatile long delivered;
    private volatile long totalLatencyNanos;
    private volatile long lastLatencyNanos;

    LoopProbe(EventExecutor loop, int index, String name, long startNanos, long startMillis) {
        this.loop = loop;
        this.index = index;
        this.name = name;
        this.lastMovedNanos = startNanos;
        this.lastMovedMillis = startMillis;
    }

    @Override
    public EventExecutor executor() {
        return loop;
    }

    /** None: a probe is never a topic's member, so nothing asks for its route. */
    @Override
    public Route route() {
        return null;
    }

    @Override
    public ConnectionStats stats() {
        return stats;
    }

    @Override
    public boolean deliver(PreparedFrame frame) {
        long now = System.nanoTime();
        long latency = now - frame.publishedAtNanos();
        lastLatencyNanos = latency;
        totalLatencyNanos += latency; // single writer: this loop
        delivered++;
        lastMovedNanos = now;
        lastMovedMillis = System.currentTimeMillis();
        inFlightSince = 0;
        return false; // nothing written, nothing to flush
    }

    @Override
    public void flush() {
        // nothing written
    }

    /** Marks a probe as sent at {@code nanos}; called just before it goes into the fan-out. */
    void sent(long nanos) {
        inFlightSince = nanos;
    }

    boolean inFlight() {
        return inFlightSince != 0;
    }

    int index() {
        return index;
    }

    String name() {
        return name;
    }

    long lastMovedNanos() {
        return lastMovedNanos;
    }

    long lastMovedMillis() {
        return lastMovedMillis;
    }

    long delivered() {
        return delivered;
    }

    long totalLatencyNanos() {
        return totalLatencyNanos;
    }

    long lastLatencyNanos() {
        return lastLatencyNanos;
    }
}
