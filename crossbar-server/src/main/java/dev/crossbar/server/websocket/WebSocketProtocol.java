package dev.crossbar.server.websocket;

import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import java.time.Duration;
import java.util.List;

/**
 * The one way every WebSocket endpoint of the relay (topics, the statistics socket) configures
 * Netty's protocol handler, which does the handshake: the gate has already chosen the path and no
 * extension is negotiated. Once the handshake is done the relay's {@link MessageReader} and
 * {@link ConnectionLifecycle} take over its frames ({@link ProtocolSwap}); the decoder settings
 * below hold for the moment between the 101 and that swap, in which a client may send nothing.
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
                // No automatic 1000 on close(): our closes send their own code (CloseCodes), through
                // the lifecycle.
                .sendCloseFrame(null)
                .dropPongFrames(true)
                .decoderConfig(WebSocketDecoderConfig.newBuilder()
                        .maxFramePayloadLength(maxFrameBytes)
                        .expectMaskedFrames(true)
                        .allowMaskMismatch(false)
                        .allowExtensions(false)
                        // Thrown only: the lifecycle answers, and closes without a reset.
                        .closeOnProtocolViolation(false)
                        // Text is the reader's to check (Utf8Check).
                        .withUTF8Validator(false)
                        .build())
                .build();
    }
}
