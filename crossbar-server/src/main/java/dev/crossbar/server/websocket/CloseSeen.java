package dev.crossbar.server.websocket;

import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;

/**
 * The first close frame of a connection, either way (the client's, or the relay's), as a user
 * event the {@link ConnectionLifecycle} fires to the handlers after it: a 1:1 session's end closes
 * the other side with the same code and reason.
 *
 * @param status the frame's code; a frame without one (1005, "no status") or with an invalid one is 1000
 * @param reason its reason, or the empty string
 */
public record CloseSeen(WebSocketCloseStatus status, String reason) {

    static CloseSeen of(CloseWebSocketFrame close) {
        int code = close.statusCode();
        if (code < 0 || !WebSocketCloseStatus.isValidStatusCode(code)) {
            return new CloseSeen(WebSocketCloseStatus.NORMAL_CLOSURE, code < 0 ? "" : reasonOf(close));
        }
        return new CloseSeen(new WebSocketCloseStatus(code, "", false), reasonOf(close));
    }

    private static String reasonOf(CloseWebSocketFrame close) {
        String r = close.reasonText();
        return r == null ? "" : r;
    }
}
