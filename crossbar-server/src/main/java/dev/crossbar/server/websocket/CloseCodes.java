package dev.crossbar.server.websocket;

import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;

/**
 * The WebSocket close codes Crossbar sends, each with the one situation it means. Documented for
 * clients in {@code docs/protocol.md}.
 */
public final class CloseCodes {

    /** 1001: the relay is shutting down, or the client was silent past the idle timeout. */
    public static final WebSocketCloseStatus GOING_AWAY = WebSocketCloseStatus.ENDPOINT_UNAVAILABLE;
    /** 1002: a protocol violation (bad framing, unexpected continuation). */
    public static final WebSocketCloseStatus PROTOCOL_ERROR = WebSocketCloseStatus.PROTOCOL_ERROR;
    /** 1007: a text message that is not valid UTF-8. */
    public static final WebSocketCloseStatus INVALID_PAYLOAD = WebSocketCloseStatus.INVALID_PAYLOAD_DATA;
    /** 1008: a policy refusal (e.g. not allowed on this route). */
    public static final WebSocketCloseStatus POLICY_VIOLATION = WebSocketCloseStatus.POLICY_VIOLATION;
    /** 1009: a message larger than the relay's limit. */
    public static final WebSocketCloseStatus MESSAGE_TOO_BIG = WebSocketCloseStatus.MESSAGE_TOO_BIG;
    /** 1011: an unexpected failure inside the relay. */
    public static final WebSocketCloseStatus INTERNAL_ERROR = WebSocketCloseStatus.INTERNAL_SERVER_ERROR;
    /**
     * 1012: the relay is restarting (draining before an upgrade or a move): reconnect, to another
     * node of the cluster or to this one once it is back.
     */
    public static final WebSocketCloseStatus SERVICE_RESTART = WebSocketCloseStatus.SERVICE_RESTART;
    /** 1013: the client did not keep up with its stream and was disconnected (slow consumer). */
    public static final WebSocketCloseStatus TRY_AGAIN_LATER = WebSocketCloseStatus.TRY_AGAIN_LATER;
    /**
     * 4010: a {@code slow=backpressure} (lossless) stream lost messages between nodes that no node
     * could send again; the reason starts {@code lost <n>[+] after <seq>:} (see docs/protocol.md).
     */
    public static final WebSocketCloseStatus MESSAGES_LOST = new WebSocketCloseStatus(4010, "Messages lost");

    private CloseCodes() {
    }
}
