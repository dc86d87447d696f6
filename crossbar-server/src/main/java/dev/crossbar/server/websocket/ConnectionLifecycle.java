package dev.crossbar.server.websocket;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
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
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
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
 * session (relay, statistics socket, 1:1 session): it is kept while the client answers, and closed
 * with a closing handshake bounded in time. Its {@link MessageReader} hands it every control frame
 * and every violation; it reads no message itself (it does not override {@code channelRead}), so a
 * message passes it without a call.
 *
 * <p>Keepalive: after the upgrade, each reader-idle interval (from the {@link ReadIdleTimer}
 * near the socket, which sees every byte read, pongs included) sends a ping; after
 * {@code missedPingsBeforeClose} silent intervals in a row the connection is closed with 1001. Any
 * byte from the client (data, pong) starts the count again. A client's ping is answered with a
 * pong ({@link #pingReceived}).
 *
 * <p>Closing: {@link #close} writes the close frame once; from then on the connection
 * {@link #isClosing() is closing}: every other write that reaches this handler is released and
 * refused, so nothing follows the close frame and senders can stop counting deliveries. Writers
 * that skip this handler (relay sessions) check {@link #isClosing()} themselves. RFC 6455 has one
 * close frame each way, and a browser fails a connection that gets two (its page would see 1006,
 * not our code, and could not follow the client contract): the client's close frame
 * ({@link #closeReceived}) is answered with its own code and reason only if the relay has sent
 * none, and otherwise ends the handshake. The socket is closed when the client answers; a timer
 * closes it otherwise, 1 s after the close frame reached the socket (closing at once would let a
 * client still sending reset the connection before it reads the close frame), or 2 s after it was
 * queued if it is still stuck behind data the client is not reading. The timer is cancelled when
 * the channel closes. The first close frame either way is told to the handlers after this one
 * ({@link CloseSeen}).
 *
 * <p>A protocol violation ends the connection too ({@link #protocolViolation}): it is answered
 * with a close frame (1002, 1007, 1009), and from then on the connection is closing. The socket is
 * closed as after any close frame of ours, when the client answers with its close frame or closes,
 * or by the timers, not at once: the client may still be sending (the rest of a message over the
 * limit), and closing with its bytes arriving resets the connection, which can destroy the close
 * frame before the client reads it. Until then the reader skips what it sends. After an invalid
 * close frame the client sends nothing more: the socket is closed at once, without a close frame.
 * A violation is the client's fault: logged at DEBUG, not passed on as an error.
 *
 * <p>Place it right after the WebSocket protocol handler (which does the handshake), so that it
 * sees the handshake event first and every write from the handlers after it. State is touched
 * only on the channel's loop; {@link #close} may be called from any thread.
 *
 * <p>Ownership: a refused write is released here; control frames handed in are written back
 * (a pong, the close frame's answer) or released; everything else passes on as it came.
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
    /** Whether the first close frame either way has been told ({@link CloseSeen}). */
    private boolean closeSeen;
    private int idleIntervals;
    private ScheduledFuture<?> closeTimer;
    /** The code and reason of the first close frame the relay sent, for the audit trail; 0 until then. */
    private int closeCode;
    private String closeReason;

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

    /** Keeps the first close frame's code and reason, whoever wrote it through here. */
    private void remember(CloseWebSocketFrame frame) {
        if (closeCode == 0) {
            closeCode = frame.statusCode();
            closeReason = frame.reasonText();
        }
    }

    /** The code of the close frame this relay sent first, or 0 if it sent none (the client closed, or it dropped). */
    public int closeCode() {
        return closeCode;
    }

    /** The reason of that close frame, or null. */
    public String closeReason() {
        return closeReason;
    }

    /** The first close frame either way, told to the handlers after this one. */
    private void seen(CloseWebSocketFrame frame) {
        if (!closeSeen) {
            closeSeen = true;
            ctx.fireUserEventTriggered(CloseSeen.of(frame));
        }
    }

    /** The client's ping: answered with a pong that carries its payload, unless the connection is closing. Takes the payload. */
    void pingReceived(ByteBuf payload) {
        if (closing || !ctx.channel().isActive()) {
            payload.release();
            return;
        }
        ctx.writeAndFlush(new PongWebSocketFrame(payload));
    }

    /**
     * The client's close frame. After ours it ends the closing handshake: the socket is closed once
     * what was written before it has gone. Otherwise the client is answered with its own code and
     * reason, and the socket closed once that has gone (or after {@link #CLOSE_FLUSH_TIMEOUT_MILLIS},
     * if the client does not read it). Takes the frame.
     */
    void closeReceived(CloseWebSocketFrame frame) {
        seen(frame);
        if (closing || !ctx.channel().isActive()) {
            frame.release();
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        closing = true;
        closeAfter(CLOSE_FLUSH_TIMEOUT_MILLIS);
        ctx.writeAndFlush(frame).addListener(ChannelFutureListener.CLOSE);
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
        remember(frame);
        seen(frame);
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
            Object last = Unpooled.EMPTY_BUFFER;
            if (answer && first) {
                CloseWebSocketFrame answerFrame = closeFrame(violation);
                remember(answerFrame);
                seen(answerFrame);
                last = answerFrame;
            }
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

    /** After a violation, the client's close frame: it sends nothing more, so the socket is closed once ours has gone. */
    void clientClosedAfterViolation() {
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof DecoderException) { // not a violation: the reader answers those
            closing = true;
            log.debug("{} undecodable input: {}", ctx.channel(), cause.getMessage());
            ctx.close();
        } else {
            ctx.fireExceptionCaught(cause);
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof CloseWebSocketFrame frame) {
            remember(frame);
        }
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
