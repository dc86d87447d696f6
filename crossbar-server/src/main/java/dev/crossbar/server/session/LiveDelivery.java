package dev.crossbar.server.session;

import dev.crossbar.core.relay.PreparedFrame;
import dev.crossbar.core.stats.ConnectionStats;
import dev.crossbar.server.config.SlowConsumerPolicy;
import dev.crossbar.server.websocket.CloseCodes;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A live stream's receiver (the default): what it cannot take is dropped whole and counted; the
 * sender and the other receivers never wait for it.
 *
 * <p>Up to {@code maxQueueBytes} may wait for any receiver; beyond that, one that has read some of
 * its queue within {@code stallNanos} may have up to {@code maxBacklogBytes} waiting (by default
 * twice the largest message), so a reader that keeps up never loses a message to a burst of large
 * ones. One that has read nothing for longer is stalled and loses what does not fit its
 * {@code maxQueueBytes}. An empty queue takes any one message. Under the {@code DISCONNECT} policy a
 * receiver still losing messages after the grace period is closed (1013).
 */
final class LiveDelivery implements DeliveryMode {

    /** Pending bytes that still count as an empty queue: Netty adds ~100 bytes per queued write. */
    static final int QUEUE_SLACK_BYTES = 4096;

    private final RelaySession session;
    private final Outlet outlet;
    private final ConnectionStats stats;
    private final int maxQueueBytes;
    private final long maxBacklogBytes;
    private final long stallNanos;
    private final SlowConsumerPolicy slowPolicy;
    private final long slowGraceMillis;
    /** What the client had read when last looked at, and when that last grew. */
    private long drainedBytes;
    private long drainedAtNanos;
    private ScheduledFuture<?> slowTimer;

    LiveDelivery(RelaySession session, Outlet outlet, int maxQueueBytes, long maxBacklogBytes, long stallNanos,
                 SlowConsumerPolicy slowPolicy, long slowGraceMillis) {
        this.session = session;
        this.outlet = outlet;
        this.stats = session.stats();
        this.maxQueueBytes = maxQueueBytes;
        this.maxBacklogBytes = Math.max(maxQueueBytes, maxBacklogBytes);
        this.stallNanos = stallNanos;
        this.slowPolicy = slowPolicy;
        this.slowGraceMillis = slowGraceMillis;
    }

    @Override
    public boolean deliver(PreparedFrame frame) {
        int length = frame.frameLength();
        long queued = outlet.pendingBytes();
        // The publish time stands for now: the message was read a moment ago, and it costs no clock read.
        long now = frame.publishedAtNanos();
        if (queued <= QUEUE_SLACK_BYTES) {
            // Nothing queued: any one message may follow, and a stall can only start from now.
            drainedBytes = outlet.drainedBytes();
            drainedAtNanos = now;
        } else if (queued + length > maxQueueBytes && (queued + length > maxBacklogBytes || stalled(now))) {
            stats.recordDropped();
            onSlow();
            return false;
        }
        stats.recordOut(frame.payloadLength(), now);
        return outlet.write(frame);
    }

    /** Whether the client has read nothing of its queue for longer than the stall timeout. */
    private boolean stalled(long now) {
        long drained = outlet.drainedBytes();
        // Only a rise is reading: Netty counts ~100 bytes of bookkeeping per queued write.
        boolean read = drained > drainedBytes;
        drainedBytes = drained;
        if (read) {
            drainedAtNanos = now;
            return false;
        }
        return now - drainedAtNanos > stallNanos;
    }

    /**
     * Under {@code DISCONNECT}: the first drop starts the grace period; if the client dropped more
     * during it, it is closed with 1013. Reading below half its bound cancels the timer. Only drops
     * over its own bound count, not those of a full event loop.
     */
    private void onSlow() {
        if (slowPolicy == SlowConsumerPolicy.DISCONNECT && slowTimer == null) {
            long droppedAtStart = stats.droppedOverBound();
            EventExecutor loop = session.executor();
            slowTimer = loop.schedule(() -> {
                slowTimer = null;
                if (stats.droppedOverBound() > droppedAtStart) {
                    session.close(CloseCodes.TRY_AGAIN_LATER, "slow consumer: not reading fast enough for this stream");
                }
            }, slowGraceMillis, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public void writabilityChanged(boolean writable) {
        if (writable) {
            cancelSlowTimer();
        }
    }

    @Override
    public void end() {
        cancelSlowTimer();
    }

    private void cancelSlowTimer() {
        if (slowTimer != null) {
            slowTimer.cancel(false);
            slowTimer = null;
        }
    }
}
