package dev.crossbar.bench.jmh;

import dev.crossbar.core.relay.Member;
import dev.crossbar.core.relay.PreparedFrame;
import dev.crossbar.core.route.Route;
import dev.crossbar.core.stats.ConnectionStats;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in topic member on a real event loop, for benchmarks of the core alone (fan-out, joins):
 * it takes a {@code retainedDuplicate()} of each delivery, counts it, and releases it, as a socket
 * write would once sent. It is not {@code RelaySession} and has no channel, so it measures neither
 * the session's checks nor Netty's write path ({@link RelaySessionBenchmark} does). Each delivery
 * counts down the benchmark's {@code remaining}.
 */
public final class DiscardMember implements Member {

    private final EventExecutor loop;
    private final Route route;
    private final AtomicInteger remaining;
    private final ConnectionStats stats = ConnectionStats.startingNow();
    private boolean needsFlush;

    public DiscardMember(EventExecutor loop, Route route, AtomicInteger remaining) {
        this.loop = loop;
        this.route = route;
        this.remaining = remaining;
    }

    @Override
    public EventExecutor executor() {
        return loop;
    }

    @Override
    public Route route() {
        return route;
    }

    @Override
    public ConnectionStats stats() {
        return stats;
    }

    @Override
    public boolean deliver(PreparedFrame frame) {
        ByteBuf dup = frame.content().retainedDuplicate();
        stats.recordOut(frame.payloadLength(), System.nanoTime());
        dup.release();
        remaining.decrementAndGet();
        if (needsFlush) {
            return false;
        }
        needsFlush = true;
        return true;
    }

    @Override
    public void flush() {
        needsFlush = false;
    }
}
