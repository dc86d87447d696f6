package dev.crossbar.server.websocket;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How an upgraded WebSocket connection ends, one per connection and the same for every kind of
 * session (relay, statistics socket): it is kept while the client answers, and closed with a
 * closing handshake bounded in time.
 *
 * <p>Keepalive: after the upgrade, each reader-idle interval (from the {@link ReadIdleTimer}
 * near the socket, which sees every byte read, pongs included) sends a ping; after
 * {@code missedPingsBeforeClose} silent intervals in a row the connection is closed with 1001. Any
 * byte from the client (data, pong) starts the count again.
 *
 * <p>Closing: {@link #close} writes the close frame once; from then on the connection
 * {@link #isClosing() is closing}: every other write that reaches this handler is released and
 * refused, so nothing follows the close frame and senders can stop counting deliveries. A close
 * frame written by someone else (the protocol handler's answer to a client's close, which does not
 * pass this handler) makes it closing too: {@link FrameEncoder} reports every close frame, and
 * drops a second one: when the client answers a close of ours, the protocol handler answers that
 * in turn, and a browser fails a connection that gets two (its page would see 1006, not our code,
 * and could not follow the client contract). Writers
 * that skip this handler (relay sessions) check {@link #isClosing()} themselves. Netty's
 * protocol handler closes the socket when the client answers; a timer closes it otherwise, 1 s
 * after the close frame reached the socket (closing at once would let a client still sending reset
 * the connection before it reads the close frame), or 2 s after it was queued if it is still stuck
 * behind data the client is not reading. The timer is cancelled when the channel closes.
 *
 * <p>A protocol violation ends the connection too ({@link #protocolViolation}, from
 * {@link ProtocolViolations}): it is answered with a close frame (1002, 1007, 1009), and from then
 * on the connection is closing. The socket is closed as after any close frame of ours, when the
 * client answers with its close frame or closes, or by the timers, not at once: the client may
 * still be sending (the rest of a message over the limit), and closing with its bytes arriving
 * resets the connection, which can destroy the close frame before the client reads it. Until then
 * what it sends is skipped by the decoder and dropped before the protocol handler. One read can
 * hold many frames: when Netty's UTF-8 validator rejects one fragment of a text message, the
 * decoder has already decoded the rest, unchecked, and the assembler would otherwise complete the
 * message without the rejected fragment and relay text that is not UTF-8 (Autobahn case 6.3.2).
 * After an invalid close frame the client sends nothing more: the socket is closed at once,
 * without a close frame. A violation is the client's fault: logged at DEBUG, not passed on as an
 * error. This handler takes no part in reading messages (it does not override
 * {@code channelRead}), so that a message passes it without a call.
 *
 * <p>Place it right after the WebSocket protocol handler, so that it sees the handshake event
 * first and every write from the handlers after it. State is touched only on the channel's loop;
 * {@link #close} may be called from any thread.
 *
 * <p>Ownership: a refused write is released here; everything else passes on as it came.
 */
public final class ConnectionLifecycle extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(ConnectionLifecycle.class);

    /** How long the client has to answer a close frame it has been sent before the socket is closed. */
    public static final long CLOSE_TIMEOUT_MILLIS = 1000;
    /**
     * How long a close frame may wait behind data the client has not read yet (a slow consumer's
     * backlog) before the socket is closed without it: memory is held for at most this long.
     */
    public static final long CLOSE_FLUSH_TIMEOUT_MILLIS = 2000;

    private static final ClosedChannelException CLOSING = new ClosedChannelException() {
        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    };

    private final int missedPingsBeforeClose;
    private ChannelHandlerContext ctx;
    private boolean upgraded;
    private boolean closing;
    private boolean closeFrameSent;
    private int idleIntervals;
    private ScheduledFuture<?> closeTimer;

    /** @param missedPingsBeforeClose silent ping intervals in a row after which the client is closed (>= 1) */
    public ConnectionLifecycle(int missedPingsBeforeClose) {
        if (missedPingsBeforeClose < 1) {
            throw new IllegalArgumentException("missedPingsBeforeClose: " + missedPingsBeforeClose + " (expected: >= 1)");
        }
        this.missedPingsBeforeClose = missedPingsBeforeClose;
    }

    /**
     * Silent ping intervals that make up {@code idleTimeout}: at least two, so a client always has
     * one whole interval to answer a ping.
     */
    public static int missedPingsBeforeClose(Duration pingInterval, Duration idleTimeout) {
        return (int) Math.max(2, Math.ceil((double) idleTimeout.toMillis() / pingInterval.toMillis()));
    }

    /** The lifecycle in {@code pipeline}; every upgraded WebSocket pipeline has one. */
    public static ConnectionLifecycle of(ChannelPipeline pipeline) {
        return requireNonNull(pipeline.get(ConnectionLifecycle.class), "no ConnectionLifecycle in the pipeline");
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Whether the close frame has been written: the connection takes no more deliveries. */
    public boolean isClosing() {
        return closing;
    }

    /**
     * A close frame is being encoded, whoever wrote it (see {@link FrameEncoder}): nothing may
     * follow it. Returns false when one already was: then this one is the protocol handler's answer
     * to the client's answer to ours, and must not be sent (RFC 6455 has one close frame each way).
     */
    boolean closeFrameWritten() {
        closing = true;
        if (closeFrameSent) {
            return false;
        }
        closeFrameSent = true;
        return true;
    }

    /**
     * Starts the closing handshake with {@code status} and {@code reason}, once: later calls do
     * nothing. Any thread.
     */
    public void close(WebSocketCloseStatus status, String reason) {
        if (!ctx.executor().inEventLoop()) {
            ctx.executor().execute(() -> close(status, reason));
            return;
        }
        if (closing) {
            return;
        }
        closing = true;
        if (!ctx.channel().isActive()) {
            return;
        }
        log.debug("{} closing: {} {}", ctx.channel(), status.code(), reason);
        writeClose(new CloseWebSocketFrame(status, reason));
    }

    /** Writes our close frame, then closes the socket when the client answers or the timers run out. */
    private void writeClose(CloseWebSocketFrame frame) {
        closeAfter(CLOSE_FLUSH_TIMEOUT_MILLIS);
        ctx.writeAndFlush(frame).addListener(written -> {
            if (written.isSuccess() && closeTimer != null) {
                closeAfter(CLOSE_TIMEOUT_MILLIS);
            }
        });
    }

    private void closeAfter(long millis) {
        if (closeTimer != null) {
            closeTimer.cancel(false);
        }
        closeTimer = ctx.executor().schedule(() -> {
            closeTimer = null;
            ctx.channel().close();
        }, millis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof HandshakeComplete) {
            upgraded = true;
        } else if (evt instanceof IdleStateEvent idle && idle.state() == IdleState.READER_IDLE
                && upgraded && !closing) {
            idle(idle.isFirst());
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void idle(boolean first) {
        if (!ctx.channel().config().isAutoRead()) {
            // Held back on a lossless stream: the relay is not reading, so silence is ours, not the client's.
            idleIntervals = 0;
            return;
        }
        idleIntervals = first ? 1 : idleIntervals + 1;
        if (idleIntervals >= missedPingsBeforeClose) {
            close(CloseCodes.GOING_AWAY, "idle timeout: nothing heard from the client");
        } else {
            ctx.writeAndFlush(new PingWebSocketFrame());
        }
    }

    /**
     * Fails the connection for {@code violation}, found in what the client sent (see the class
     * comment): answered with its code and reason, unless {@code answer} is false (the client's
     * close frame was the invalid one); the socket closed as soon as that is written if
     * {@code clientClosed}, its close frame read, otherwise as after any close frame of ours.
     */
    void protocolViolation(CorruptedWebSocketFrameException violation, boolean answer, boolean clientClosed) {
        log.debug("{} protocol violation: {}", ctx.channel(), violation.getMessage());
        if (!answer || clientClosed) {
            boolean first = !closing;
            closing = true;
            Object last = answer && first ? closeFrame(violation) : Unpooled.EMPTY_BUFFER;
            ctx.writeAndFlush(last).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        // Read what is still coming, to drop it, even if a lossless stream had stopped reading.
        ctx.channel().config().setAutoRead(true);
        if (closing) {
            return; // a close frame of ours is already on its way, with its timers
        }
        closing = true;
        if (ctx.channel().isActive()) {
            writeClose(closeFrame(violation));
        }
    }

    private static CloseWebSocketFrame closeFrame(CorruptedWebSocketFrameException violation) {
        WebSocketCloseStatus status = violation.closeStatus();
        return new CloseWebSocketFrame(status, violation.getMessage() != null ? violation.getMessage() : status.reasonText());
    }

    /** After a violation, the client's close frame: it sends nothing more, so the socket is closed now. */
    void clientClosedAfterViolation() {
        ctx.channel().close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof DecoderException) { // one that ProtocolViolations does not answer
            closing = true;
            log.debug("{} undecodable input: {}", ctx.channel(), cause.getMessage());
            ctx.close();
        } else {
            ctx.fireExceptionCaught(cause);
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (closing && !(msg instanceof CloseWebSocketFrame)) {
            ReferenceCountUtil.release(msg);
            if (!promise.isVoid()) {
                promise.tryFailure(CLOSING);
            }
            return;
        }
        ctx.write(msg, promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        closing = true;
        if (closeTimer != null) {
            closeTimer.cancel(false);
            closeTimer = null;
        }
        ctx.fireChannelInactive();
    }
}
