package dev.crossbar.server.health;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.relay.FanOut;
import dev.crossbar.core.relay.LoopGroup;
import dev.crossbar.core.relay.Member;
import dev.crossbar.core.relay.RelayBuffers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay's own liveness check: every probe interval, one small message goes through the real
 * fan-out ({@link FanOut}, the path messages from other nodes take: a queued delivery per loop,
 * drained by a task on that loop) to a {@link LoopProbe} living on each event loop. A loop that has
 * delivered no probe for longer than the maximum age is stuck (blocked, deadlocked, or drowning in
 * backlog), and {@link #stuckReason()} says which and since when, for {@code /healthz}.
 *
 * <p>Probes are sent from the admin executor, never from an event loop. At most one probe per loop
 * is in flight; one that has not arrived within the maximum age is sent again (the first may have
 * been refused by a full backlog), so a stuck loop holds at most one probe per maximum age.
 */
public final class LoopHealth implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LoopHealth.class);
    /** The probe's payload: one byte, as small as a real message gets. */
    private static final byte PROBE_BYTE = 'p';

    private final FanOut fanOut;
    private final List<LoopProbe> probes;
    private final LoopGroup[] groups;
    private final long intervalNanos;
    private final long maxAgeNanos;
    private final EventExecutor scheduler;
    /** Loops reported stuck in the log, so each episode logs once (only the scheduler touches it). */
    private final boolean[] reportedStuck;
    private ScheduledFuture<?> task;

    /**
     * @param loops     the event loops to probe, in order
     * @param scheduler where probes are sent from (the admin executor)
     */
    public LoopHealth(FanOut fanOut, List<? extends EventExecutor> loops, Duration interval, Duration maxAge,
                      EventExecutor scheduler) {
        this.fanOut = requireNonNull(fanOut, "fanOut");
        this.scheduler = requireNonNull(scheduler, "scheduler");
        this.intervalNanos = interval.toNanos();
        this.maxAgeNanos = maxAge.toNanos();
        long nowNanos = System.nanoTime();
        long nowMillis = System.currentTimeMillis();
        List<LoopProbe> list = new ArrayList<>(loops.size());
        groups = new LoopGroup[loops.size()];
        for (int i = 0; i < loops.size(); i++) {
            EventExecutor loop = loops.get(i);
            LoopProbe probe = new LoopProbe(loop, i, threadName(loop, i), nowNanos, nowMillis);
            list.add(probe);
            groups[i] = new LoopGroup(loop, new Member[] {probe});
        }
        this.probes = List.copyOf(list);
        this.reportedStuck = new boolean[loops.size()];
    }

    private static String threadName(EventExecutor loop, int index) {
        if (loop instanceof SingleThreadEventExecutor s && s.threadProperties() != null) {
            return s.threadProperties().name();
        }
        return "event loop " + index;
    }

    public void start() {
        task = scheduler.scheduleAtFixedRate(this::probe, 0, intervalNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void close() {
        if (task != null) {
            task.cancel(false);
        }
    }

    /** One round: a probe to every loop with none in flight (or one overdue), in one fan-out. */
    void probe() {
        long now = System.nanoTime();
        List<LoopGroup> due = new ArrayList<>(groups.length);
        for (int i = 0; i < groups.length; i++) {
            LoopProbe p = probes.get(i);
            if (!p.inFlight() || now - p.lastMovedNanos() > maxAgeNanos) {
                p.sent(now);
                due.add(groups[i]);
            }
            logTransition(p, now);
        }
        if (due.isEmpty()) {
            return;
        }
        ByteBuf payload = RelayBuffers.ALLOCATOR.directBuffer(1).writeByte(PROBE_BYTE);
        try {
            fanOut.send(due.toArray(new LoopGroup[0]), null, false, payload, RelayBuffers.ALLOCATOR, now);
        } catch (RuntimeException e) {
            // Shutting down, or out of direct memory: the missing delivery will show as a stuck loop.
            log.debug("health probe not sent", e);
        }
    }

    private void logTransition(LoopProbe p, long now) {
        boolean stuck = now - p.lastMovedNanos() > maxAgeNanos;
        if (stuck && !reportedStuck[p.index()]) {
            reportedStuck[p.index()] = true;
            log.warn("{}; /healthz answers 503", describe(p, now));
        } else if (!stuck && reportedStuck[p.index()]) {
            reportedStuck[p.index()] = false;
            log.info("event loop {} ({}) moves messages again", p.index(), p.name());
        }
    }

    /**
     * Null while every loop has delivered a probe within the maximum age; otherwise one line naming
     * each stuck loop and since when it has delivered none.
     */
    public String stuckReason() {
        long now = System.nanoTime();
        StringBuilder reason = null;
        for (LoopProbe p : probes) {
            if (now - p.lastMovedNanos() > maxAgeNanos) {
                reason = reason == null ? new StringBuilder() : reason.append("; ");
                reason.append(describe(p, now));
            }
        }
        return reason == null ? null : reason.toString();
    }

    private String describe(LoopProbe p, long now) {
        return String.format(Locale.ROOT, "event loop %d (%s) has delivered no probe for %.1f s (since %s; limit %.1f s)",
                p.index(), p.name(), (now - p.lastMovedNanos()) / 1e9, Instant.ofEpochMilli(p.lastMovedMillis()),
                maxAgeNanos / 1e9);
    }

    /** The probes, one per loop in order, for metrics. */
    public List<Probe> probes() {
        List<Probe> views = new ArrayList<>(probes.size());
        for (LoopProbe p : probes) {
            views.add(new Probe(p));
        }
        return views;
    }

    /** What metrics read of one loop's probe. */
    public static final class Probe {
        private final LoopProbe probe;

        Probe(LoopProbe probe) {
            this.probe = probe;
        }

        public int loop() {
            return probe.index();
        }

        /** Probes this loop has delivered. */
        public long delivered() {
            return probe.delivered();
        }

        /** Sum of their latencies (sent → delivered on the loop), in nanoseconds. */
        public long totalLatencyNanos() {
            return probe.totalLatencyNanos();
        }

        /** The latest probe's latency, in nanoseconds (0 before the first). */
        public long lastLatencyNanos() {
            return probe.lastLatencyNanos();
        }

        /** Seconds since this loop last delivered a probe (or since probing began). */
        public double ageSeconds() {
            return (System.nanoTime() - probe.lastMovedNanos()) / 1e9;
        }
    }
}
