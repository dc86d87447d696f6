package dev.crossbar.server.session;

import dev.crossbar.core.relay.PreparedFrame;
import dev.crossbar.core.route.StreamOptions;
import dev.crossbar.core.stats.ConnectionStats;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;

/**
 * A {@code max-latency} stream's receiver: messages beyond a few kilobytes in the channel wait in
 * its own {@link LatencyQueue}, which skips it forward when they would reach it too late, counting
 * the time they will still spend in the sockets from the receiver's measured pace
 * ({@link ReceiverPace}); the socket's send buffer is made small, so little is beyond reach.
 */
final class LatestDelivery implements DeliveryMode {

    /** What the channel may hold before the latency queue holds it. */
    static final int CHANNEL_BYTES = 4096;

    private final RelaySession session;
    private final Outlet outlet;
    private final ConnectionStats stats;
    private final Channel channel;
    private final LatencyQueue queue;
    private final ReceiverPace pace = new ReceiverPace();
    private final long maxLatencyNanos;
    /** The socket's send buffer as the kernel reports it (Linux doubles what was asked). */
    private final int socketBufferBytes;
    private int lastFrameLength;

    LatestDelivery(RelaySession session, Outlet outlet, Channel channel, StreamOptions options, long maxBacklogBytes,
                   int socketBytes) {
        this.session = session;
        this.outlet = outlet;
        this.stats = session.stats();
        this.channel = channel;
        this.maxLatencyNanos = options.maxLatency().toNanos();
        this.queue = new LatencyQueue(maxLatencyNanos, options.start() == StreamOptions.Start.KEYFRAME, maxBacklogBytes);
        channel.config().setWriteBufferWaterMark(new WriteBufferWaterMark(CHANNEL_BYTES / 2, CHANNEL_BYTES));
        channel.config().setOption(ChannelOption.SO_SNDBUF, socketBytes);
        Integer reported = channel.config().getOption(ChannelOption.SO_SNDBUF);
        this.socketBufferBytes = reported == null ? socketBytes : reported;
    }

    @Override
    public boolean deliver(PreparedFrame frame) {
        pace.observe(outlet.drainedBytes(), System.nanoTime());
        lastFrameLength = frame.frameLength();
        recordDropped(queue.offer(frame.retain(), frame.publishedAtNanos(), socketDelayNanos(), channel.alloc()));
        boolean flush = pump();
        pace.backlogged(!queue.isEmpty());
        return flush;
    }

    @Override
    public void writabilityChanged(boolean writable) {
        if (!writable) {
            return;
        }
        long now = System.nanoTime();
        pace.observe(outlet.drainedBytes(), now);
        recordDropped(queue.skipStale(now, socketDelayNanos(), channel.alloc()));
        if (pump()) {
            outlet.flush();
        }
        pace.backlogged(!queue.isEmpty());
    }

    @Override
    public void end() {
        queue.clear();
    }

    /**
     * How long a message written now will wait before the receiver has read it: what is ahead of it
     * (the channel, the socket's buffer, and at the receiver a message in its socket and one it is
     * reading) at its pace; half the bound until the pace is known, so a receiver that falls behind
     * in its first moments does not drift past the bound while it is measured.
     */
    private long socketDelayNanos() {
        return pace.nanosFor(socketBufferBytes + outlet.pendingBytes() + 2L * lastFrameLength, maxLatencyNanos / 2);
    }

    /** Moves frames from the queue to the channel while it is writable; the writability event brings the rest. */
    private boolean pump() {
        boolean newlyNeedsFlush = false;
        while (!queue.isEmpty() && channel.isWritable() && session.mayWrite()) {
            PreparedFrame f = queue.poll();
            try {
                stats.recordOut(f.payloadLength(), f.publishedAtNanos());
                newlyNeedsFlush |= outlet.write(f);
            } finally {
                f.release();
            }
        }
        return newlyNeedsFlush;
    }

    private void recordDropped(int messages) {
        for (int i = 0; i < messages; i++) {
            stats.recordDropped();
        }
    }
}
