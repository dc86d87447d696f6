package dev.crossbar.server.websocket;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Fires {@link IdleStateEvent#FIRST_READER_IDLE_STATE_EVENT}, then
 * {@link IdleStateEvent#READER_IDLE_STATE_EVENT} once per interval, while nothing is read from the
 * channel: what Netty's {@code IdleStateHandler} does for reader idleness alone, which is all the
 * keepalive ({@link ConnectionLifecycle}) uses. The general handler carries writer and all-idle
 * state and a separate task object; this one is its own task, which saves ~110 bytes on each of
 * 10,000 idle connections. Place it near the socket, so that it sees every byte read (pongs too).
 *
 * <p>State is touched only on the channel's event loop. A channel moved to another loop gets a
 * fresh timer (the old one's task belongs to the old loop).
 */
public final class ReadIdleTimer extends ChannelInboundHandlerAdapter implements Runnable {

    private final long intervalNanos;
    private ChannelHandlerContext ctx;
    private long lastReadNanos;
    /** A read is in progress: bytes arrived that {@code channelReadComplete} has not yet stamped. */
    private boolean reading;
    private boolean firstEvent = true;
    /** 0: not started, 1: running, 2: stopped for good. */
    private byte state;
    private ScheduledFuture<?> timeout;

    public ReadIdleTimer(long interval, TimeUnit unit) {
        this.intervalNanos = Math.max(unit.toNanos(interval), TimeUnit.MILLISECONDS.toNanos(1));
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().isActive() && ctx.channel().isRegistered()) {
            start();
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        stop();
    }

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isActive()) {
            start();
        }
        super.channelRegistered(ctx);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        start();
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        stop();
        super.channelInactive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        reading = true;
        firstEvent = true;
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (reading) {
            lastReadNanos = System.nanoTime();
            reading = false;
        }
        ctx.fireChannelReadComplete();
    }

    private void start() {
        if (state != 0) {
            return;
        }
        state = 1;
        lastReadNanos = System.nanoTime();
        timeout = ctx.executor().schedule(this, intervalNanos, TimeUnit.NANOSECONDS);
    }

    private void stop() {
        state = 2;
        if (timeout != null) {
            timeout.cancel(false);
            timeout = null;
        }
    }

    /** The timer: re-armed for the rest of the interval after a read, or fires and re-arms for a whole one. */
    @Override
    public void run() {
        if (state != 1 || !ctx.channel().isOpen()) {
            return;
        }
        long next = reading ? intervalNanos : intervalNanos - (System.nanoTime() - lastReadNanos);
        if (next > 0) {
            timeout = ctx.executor().schedule(this, next, TimeUnit.NANOSECONDS);
            return;
        }
        timeout = ctx.executor().schedule(this, intervalNanos, TimeUnit.NANOSECONDS);
        IdleStateEvent event = firstEvent ? IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT
                : IdleStateEvent.READER_IDLE_STATE_EVENT;
        firstEvent = false;
        ctx.fireUserEventTriggered(event);
    }
}
