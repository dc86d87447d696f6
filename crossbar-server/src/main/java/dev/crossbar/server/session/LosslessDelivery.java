package dev.crossbar.server.session;

import dev.crossbar.core.relay.PreparedFrame;
import dev.crossbar.core.stats.ConnectionStats;
import dev.crossbar.core.topic.HoldBack;
import dev.crossbar.server.websocket.CloseCodes;
import io.netty.channel.Channel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A {@code slow=backpressure} stream's receiver: nothing is dropped. Over its bound (the channel not
 * writable), it holds the stream's senders back ({@link HoldBack}: their sockets are not read, and
 * TCP slows the clients), and is watched: one that reads nothing for the backpressure timeout is
 * closed (1013) rather than hold everyone for ever. Messages from other nodes cannot be held back
 * until the hold reaches them; a receiver that lets more than {@code maxBacklogBytes} pile up is
 * closed (1013) rather than lose any.
 */
final class LosslessDelivery implements DeliveryMode {

    private final RelaySession session;
    private final Outlet outlet;
    private final ConnectionStats stats;
    private final HoldBack holdBack;
    private final long timeoutNanos;
    private final long maxBacklogBytes;
    /** While this receiver holds the senders: checks that it still reads. */
    private ScheduledFuture<?> stallWatch;

    LosslessDelivery(RelaySession session, Outlet outlet, Channel channel, HoldBack holdBack, int maxQueueBytes,
                     long timeoutNanos, long maxBacklogBytes) {
        this.session = session;
        this.outlet = outlet;
        this.stats = session.stats();
        this.holdBack = holdBack;
        this.timeoutNanos = timeoutNanos;
        this.maxBacklogBytes = maxBacklogBytes;
        // Over the bound, Netty's writability turns false: the signal to hold the senders back.
        channel.config().setWriteBufferWaterMark(new WriteBufferWaterMark(maxQueueBytes / 2, maxQueueBytes));
    }

    @Override
    public boolean deliver(PreparedFrame frame) {
        long pending = outlet.pendingBytes();
        if (pending + frame.frameLength() > maxBacklogBytes && pending > LiveDelivery.QUEUE_SLACK_BYTES) {
            session.close(CloseCodes.TRY_AGAIN_LATER, "lossless stream: more than " + maxBacklogBytes
                    + " bytes waiting for this client (from other nodes, which cannot be held back)");
            return false;
        }
        stats.recordOut(frame.payloadLength(), frame.publishedAtNanos());
        return outlet.write(frame);
    }

    @Override
    public void writabilityChanged(boolean writable) {
        if (writable) {
            holdBack.release(session);
            cancelStallWatch();
            return;
        }
        holdBack.hold(session);
        if (stallWatch == null) {
            long period = Math.max(1, timeoutNanos / 4);
            long[] last = {outlet.drainedBytes(), System.nanoTime()};
            stallWatch = session.executor().scheduleAtFixedRate(() -> {
                long drained = outlet.drainedBytes();
                long now = System.nanoTime();
                if (drained > last[0]) {
                    last[0] = drained;
                    last[1] = now;
                } else if (now - last[1] >= timeoutNanos) {
                    cancelStallWatch();
                    session.close(CloseCodes.TRY_AGAIN_LATER, "stalled: read nothing for "
                            + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos)
                            + "s of a lossless stream, holding its senders back");
                }
            }, period, period, TimeUnit.NANOSECONDS);
        }
    }

    /** Closing: it reads nothing more, and must not hold the others. */
    @Override
    public void end() {
        cancelStallWatch();
        holdBack.release(session);
    }

    private void cancelStallWatch() {
        if (stallWatch != null) {
            stallWatch.cancel(false);
            stallWatch = null;
        }
    }
}
