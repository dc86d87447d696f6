package dev.crossbar.server.websocket;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.util.List;

/**
 * Netty's server-side frame encoder (frames unmasked), which also tells the connection's
 * {@link ConnectionLifecycle} when a close frame passes, whoever wrote it: the lifecycle's own
 * close, the protocol handler's answer to a client's close, a codec's answer to a violation; and
 * sends only the first (see {@link ConnectionLifecycle}).
 *
 * <p>Why: relayed messages are frames already encoded once for all their receivers
 * ({@code PreparedFrame}), and a {@code RelaySession} writes them from this handler's context, past
 * the lifecycle and the protocol handler, whose only part in them was to refuse them after a close
 * frame (a walk of the pipeline per receiver, 8 % of the relay's CPU in fan-out to 5,000).
 * Every close frame still comes through here as a frame object, so marking the connection closing
 * here lets the session refuse deliveries itself ({@link ConnectionLifecycle#isClosing()}): the
 * protocol handler's answer to a client's close is written from its own context and never passes
 * the lifecycle.
 *
 * <p>The relay swaps it in for Netty's encoder when the upgrade completes
 * ({@code transport.FrameCodecSwap}). Holds no state of a connection: one serves every pipeline.
 *
 * <p>Ownership: as Netty's encoder: each frame is released once encoded; bytes already encoded
 * (relayed messages) pass through untouched.
 */
@Sharable
public final class FrameEncoder extends WebSocket13FrameEncoder {

    public static final FrameEncoder INSTANCE = new FrameEncoder();

    private FrameEncoder() {
        super(false);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, WebSocketFrame msg, List<Object> out) throws Exception {
        if (msg instanceof CloseWebSocketFrame) {
            ConnectionLifecycle lifecycle = ctx.pipeline().get(ConnectionLifecycle.class);
            if (lifecycle != null && !lifecycle.closeFrameWritten()) {
                // A second close frame: the protocol handler's answer to the client's answer to
                // ours. Nothing goes out; the write still completes, and the protocol handler then
                // closes the socket, as the closing handshake is over.
                out.add(Unpooled.EMPTY_BUFFER);
                return;
            }
        }
        super.encode(ctx, msg, out);
    }
}
