package dev.crossbar.server.transport;

import dev.crossbar.server.websocket.FrameDecoder;
import dev.crossbar.server.websocket.FrameEncoder;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketFrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;

/**
 * Once the upgrade is done, puts the relay's {@link FrameDecoder} and {@link FrameEncoder} where
 * Netty's handshake put its own frame decoder and encoder, then removes itself.
 *
 * <p>Why: Netty's decoder copies each payload out of the socket reads and then unmasks it in a
 * second pass; for 1 MiB messages (files, images) those passes were a quarter of the relay's CPU.
 * The relay's decoder unmasks while it copies, and takes a payload that
 * arrives over many reads as it comes, so that it holds no read while waiting for the rest. The
 * encoder is Netty's, and also marks the connection closing when a close frame passes it, which
 * lets relayed messages skip the handlers between the session and the encoder (see
 * {@link FrameEncoder}).
 *
 * <p>Safe at this point: the handshake event follows, in the same call, the completed write of the
 * 101 response and the removal of the HTTP codec, and a client may send no frame before it has read
 * that response (RFC 6455 section 4.1), so Netty's decoder has not been given a byte. (A client
 * that sends frames early, while the response is still being written, may find its first frame
 * misread and its own connection closed; {@code replace} passes whatever bytes Netty's decoder
 * held on to this one.) The encoder holds no state, so it could be swapped at any time. Handles
 * no messages: only the handshake event, which it passes on.
 */
@Sharable
final class FrameCodecSwap extends ChannelInboundHandlerAdapter {

    private final long maxFramePayloadLength;

    /** @param maxFramePayloadLength the largest frame payload a client may send (the message limit) */
    FrameCodecSwap(long maxFramePayloadLength) {
        this.maxFramePayloadLength = maxFramePayloadLength;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof HandshakeComplete) {
            ChannelHandlerContext decoder = ctx.pipeline().context(WebSocketFrameDecoder.class);
            if (decoder != null && !(decoder.handler() instanceof FrameDecoder)) {
                ctx.pipeline().replace(decoder.name(), decoder.name(), new FrameDecoder(maxFramePayloadLength));
            }
            ChannelHandlerContext encoder = ctx.pipeline().context(WebSocketFrameEncoder.class);
            if (encoder != null && !(encoder.handler() instanceof FrameEncoder)) {
                ctx.pipeline().replace(encoder.name(), encoder.name(), FrameEncoder.INSTANCE);
            }
            ctx.fireUserEventTriggered(evt);
            ctx.pipeline().remove(this);
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }
}
