package dev.crossbar.server.websocket;

import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import java.time.Duration;
import java.util.List;

/**
 * The one way every WebSocket endpoint of the relay (topics, the statistics socket) configures
 * Netty's protocol handler: the gate has already chosen the path, frames from clients must be
 * masked, no extension is negotiated, text is checked as UTF-8, and protocol violations are thrown
 * to {@link ProtocolViolations} rather than answered with an immediate close.
 */
public final class WebSocketProtocol {

    /** After a close frame, how long Netty waits for the client's before closing the socket itself. */
    static final long FORCE_CLOSE_MILLIS = 1000;

    private WebSocketProtocol() {
    }

    /**
     * @param subprotocols     accepted and echoed ({@code *}: the client's first)
     * @param handshakeTimeout Netty's own, from a whole request to the handshake's end
     * @param maxFrameBytes    largest frame payload; larger is answered with 1009
     */
    public static WebSocketServerProtocolConfig config(List<String> subprotocols, Duration handshakeTimeout,
                                                       int maxFrameBytes) {
        return WebSocketServerProtocolConfig.newBuilder()
                // The gate has already chosen this path; accept whatever query string came with it.
                .websocketPath("/")
                .checkStartsWith(true)
                .subprotocols(String.join(",", subprotocols))
                .handshakeTimeoutMillis(handshakeTimeout.toMillis())
                .forceCloseTimeoutMillis(FORCE_CLOSE_MILLIS)
                .handleCloseFrames(true)
                // No automatic 1000 on close(): a violation is answered with 1002/1007/1009 (or, after an
                // invalid close frame, nothing) by ProtocolViolations, and our own closes send their code
                // (CloseCodes).
                .sendCloseFrame(null)
                .dropPongFrames(true)
                .decoderConfig(WebSocketDecoderConfig.newBuilder()
                        .maxFramePayloadLength(maxFrameBytes)
                        .expectMaskedFrames(true)
                        .allowMaskMismatch(false)
                        .allowExtensions(false)
                        // Thrown only: ProtocolViolations answers, and closes without a reset.
                        .closeOnProtocolViolation(false)
                        .withUTF8Validator(true)
                        .build())
                .build();
    }
}
