package dev.crossbar.server.http;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.ArrayDeque;

/**
 * Keeps an HTTP connection open between requests (HTTP/1.1 by default, HTTP/1.0 with
 * {@code Connection: keep-alive}) and answers pipelined requests in the order they came.
 *
 * <p>One request at a time goes on to the gate; requests that arrive before its response has been
 * written wait here, since an endpoint may answer from another thread ({@code /metrics}). At most
 * {@link #MAX_WAITING} wait: beyond that the channel stops reading until they have been answered.
 *
 * <p>The connection closes after a response when the request asked for it ({@code Connection:
 * close}, or HTTP/1.0 without keep-alive), when the response says so (every error does:
 * {@link HttpResponses#error}), when its length is not known, or when a WebSocket upgrade was
 * refused. While it stays open, {@link HandshakeTimeout} restarts after each response with the idle
 * timeout: an open connection waits at most that long for its next request or upgrade.
 *
 * <p>Leaves the pipeline when a response switches protocols (101): WebSocket frames never pass here.
 *
 * <p>Ownership: holds one reference to each waiting request and passes it on with the request;
 * releases those still waiting when the channel closes or this handler leaves. Responses pass
 * through, only their {@code Connection} header set here.
 */
public final class HttpKeepAlive extends ChannelDuplexHandler {

    /** Pipelined requests held while one is being answered; more stop the channel reading. */
    public static final int MAX_WAITING = 16;

    private final long idleTimeoutMillis;
    private final ArrayDeque<FullHttpRequest> waiting = new ArrayDeque<>();
    /** A request has gone on and its response is not yet written. */
    private boolean answering;
    /** What the request being answered allows: keep-alive, HTTP/1.0 (which needs it said), an upgrade. */
    private boolean requestKeepsAlive;
    private boolean http10;
    private boolean upgradeRequested;
    /** A response closing the connection has been written: nothing more is answered. */
    private boolean closing;
    private boolean pausedReading;
    private boolean removed;
    /** The connection's handshake timer, which becomes its idle timer (none in some tests). */
    private HandshakeTimeout timeout;

    /** @param idleTimeoutMillis how long an open connection may wait for its next request */
    public HttpKeepAlive(long idleTimeoutMillis) {
        if (idleTimeoutMillis <= 0) {
            throw new IllegalArgumentException("idleTimeoutMillis: " + idleTimeoutMillis + " (expected: > 0)");
        }
        this.idleTimeoutMillis = idleTimeoutMillis;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        timeout = ctx.pipeline().get(HandshakeTimeout.class);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (closing) {
            request.release(); // after the response that closes the connection
            return;
        }
        if (answering) {
            waiting.add(request);
            if (waiting.size() >= MAX_WAITING && ctx.channel().config().isAutoRead()) {
                pausedReading = true;
                ctx.channel().config().setAutoRead(false);
            }
            return;
        }
        pass(ctx, request);
    }

    private void pass(ChannelHandlerContext ctx, FullHttpRequest request) {
        answering = true;
        requestKeepsAlive = HttpUtil.isKeepAlive(request);
        http10 = HttpVersion.HTTP_1_0.equals(request.protocolVersion());
        upgradeRequested = UpgradeGate.isWebSocketUpgrade(request);
        ctx.fireChannelRead(request);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof HttpResponse response) {
            if (HttpResponseStatus.SWITCHING_PROTOCOLS.equals(response.status())) {
                ctx.write(msg, promise);
                ctx.pipeline().remove(this);
                return;
            }
            if (response.status().codeClass() != HttpStatusClass.INFORMATIONAL) {
                setConnection(response);
            }
        }
        if (!(msg instanceof LastHttpContent) || !answering) {
            ctx.write(msg, promise);
            return;
        }
        answering = false;
        if (closing) {
            ChannelPromise written = promise.unvoid();
            ctx.write(msg, written);
            written.addListener(ChannelFutureListener.CLOSE);
            return;
        }
        ctx.write(msg, promise);
        if (timeout != null) {
            timeout.restartIdle(idleTimeoutMillis);
        }
        if (!waiting.isEmpty()) {
            // Not from inside this write: the next request goes on once this call has returned.
            ctx.executor().execute(() -> next(ctx));
        }
    }

    /** Says on the response whether the connection stays open, and remembers a close. */
    private void setConnection(HttpResponse response) {
        boolean keep = requestKeepsAlive && !upgradeRequested && !closing
                && HttpUtil.isKeepAlive(response) && HttpUtil.isContentLengthSet(response);
        if (keep) {
            if (http10) {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            }
        } else {
            closing = true;
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
    }

    private void next(ChannelHandlerContext ctx) {
        if (removed || answering || closing || !ctx.channel().isActive()) {
            return;
        }
        FullHttpRequest request = waiting.poll();
        if (request == null) {
            return;
        }
        if (pausedReading && waiting.size() < MAX_WAITING) {
            pausedReading = false;
            ctx.channel().config().setAutoRead(true);
        }
        pass(ctx, request);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        releaseWaiting();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        removed = true;
        releaseWaiting();
        if (pausedReading) {
            pausedReading = false;
            ctx.channel().config().setAutoRead(true);
        }
    }

    private void releaseWaiting() {
        FullHttpRequest request;
        while ((request = waiting.poll()) != null) {
            request.release();
        }
    }
}
