package dev.crossbar.server.pair;

import static java.util.Objects.requireNonNull;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;

/**
 * Sees the close frames of a session connection, both ways, before the WebSocket protocol handler
 * (which answers a client's close frame itself and passes it no further), and tells the session's
 * end the code and reason, so that the other side closes the same way.
 *
 * <p>Sits just before the protocol handler; ownership: passes every message on untouched.
 */
final class CloseObserver extends ChannelDuplexHandler {

    private final SessionEnd end;

    CloseObserver(SessionEnd end) {
        this.end = requireNonNull(end, "end");
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof CloseWebSocketFrame close) {
            end.closeSeen(status(close), reason(close));
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof CloseWebSocketFrame close) {
            end.closeSeen(status(close), reason(close));
        }
        ctx.write(msg, promise);
    }

    /** The frame's code; a close frame without one (1005 "no status") is passed on as 1000. */
    static WebSocketCloseStatus status(CloseWebSocketFrame close) {
        int code = close.statusCode();
        if (code < 0 || !WebSocketCloseStatus.isValidStatusCode(code)) {
            return WebSocketCloseStatus.NORMAL_CLOSURE;
        }
        return new WebSocketCloseStatus(code, "", false);
    }

    static String reason(CloseWebSocketFrame close) {
        String r = close.statusCode() < 0 ? "" : close.reasonText();
        return r == null ? "" : r;
    }
}
