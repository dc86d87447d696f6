package dev.crossbar.server.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a connection that has not completed its WebSocket upgrade within the timeout, counted
 * from when it connected: a client that sends half a request (slowloris) or none at all holds a
 * socket for at most this long. Netty's own handshake timeout only starts once a whole request has
 * arrived, which is too late for that case. The session removes this handler on upgrade.
 *
 * <p>On a connection kept open between HTTP requests ({@link HttpKeepAlive}) the timer restarts
 * after each response with the idle timeout ({@link #restartIdle}); when that one fires, the
 * connection was merely idle, and is closed without counting a failed handshake.
 */
public final class HandshakeTimeout extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(HandshakeTimeout.class);

    private final long timeoutMillis;
    private final HandshakeFailures failures;
    private ScheduledFuture<?> timer;
    private ChannelHandlerContext ctx;
    /** 0 until the first kept-alive response; then the idle HTTP connection timeout. */
    private long idleNanos;
    private long lastResponseNanos;

    public HandshakeTimeout(long timeoutMillis) {
        this(timeoutMillis, new HandshakeFailures());
    }

    /** As above, counting each connection it closes under {@link HandshakeFailures.Reason#TIMEOUT}. */
    public HandshakeTimeout(long timeoutMillis, HandshakeFailures failures) {
        this.timeoutMillis = timeoutMillis;
        this.failures = failures;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().isActive()) {
            start(ctx);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        start(ctx);
        ctx.fireChannelActive();
    }

    private void start(ChannelHandlerContext ctx) {
        if (timer == null) {
            timer = ctx.executor().schedule(this::expired, timeoutMillis, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Notes an HTTP response on a connection that stays open: from now on it waits at most
     * {@code idleMillis} after its latest response for its next request or upgrade. Call on the
     * channel's event loop. Cheap per response: the first call re-arms the timer, later ones only
     * note the time, and the timer, when it fires, re-arms itself for whatever is left.
     */
    public void restartIdle(long idleMillis) {
        if (ctx == null || ctx.isRemoved()) {
            return;
        }
        lastResponseNanos = System.nanoTime();
        if (idleNanos == 0) {
            idleNanos = TimeUnit.MILLISECONDS.toNanos(idleMillis);
            cancel();
            timer = ctx.executor().schedule(this::expired, idleNanos, TimeUnit.NANOSECONDS);
        }
    }

    private void expired() {
        if (!ctx.channel().isActive() || ctx.isRemoved()) {
            return;
        }
        if (idleNanos == 0) {
            log.debug("{} no WebSocket upgrade within {} ms; closing", ctx.channel(), timeoutMillis);
            failures.record(HandshakeFailures.Reason.TIMEOUT);
            ctx.close();
            return;
        }
        long left = lastResponseNanos + idleNanos - System.nanoTime();
        if (left > 0) {
            timer = ctx.executor().schedule(this::expired, left, TimeUnit.NANOSECONDS);
        } else {
            log.debug("{} idle HTTP connection: no request within {} ms of the last response; closing",
                    ctx.channel(), TimeUnit.NANOSECONDS.toMillis(idleNanos));
            ctx.close();
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        cancel();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancel();
        ctx.fireChannelInactive();
    }

    private void cancel() {
        if (timer != null) {
            timer.cancel(false);
        }
    }
}
