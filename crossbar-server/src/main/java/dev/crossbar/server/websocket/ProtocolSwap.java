package dev.crossbar.server.websocket;

import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;

/**
 * Once the upgrade is done, puts the relay's {@link MessageReader} where Netty's handshake put its
 * frame decoder, and takes out Netty's protocol handler: from then on the
 * reader and the connection's {@link ConnectionLifecycle} do what they did (whole messages,
 * control frames, the closing handshake), so a message meets one handler between the socket and
 * its session. Netty's protocol handler is kept for what it is best at, the handshake. Then it
 * removes itself.
 *
 * <p>Why the reader: Netty's decoder copies each payload out of the socket reads and then unmasks
 * it in a second pass (for 1 MiB messages, files and images, those passes were a quarter of the
 * relay's CPU), and each handler a message crosses costs objects read per message (see
 * {@link MessageReader}).
 *
 * <p>Safe at this point: the handshake event follows, in the same call, the completed write of the
 * 101 response and the removal of the HTTP codec, and a client may send no frame before it has read
 * that response (RFC 6455 section 4.1), so Netty's decoder has not been given a byte. (A client
 * that sends frames early, while the response is still being written, may find its first frame
 * misread and its own connection closed; {@code replace} passes whatever bytes Netty's decoder
 * held on to the reader.) Handles no messages: only the handshake event, which it passes on.
 * Place it after the lifecycle.
 */
@Sharable
public final class ProtocolSwap extends ChannelInboundHandlerAdapter {

    private final int maxMessageBytes;

    /** @param maxMessageBytes the largest message a client may send (1009 past it) */
    public ProtocolSwap(int maxMessageBytes) {
        this.maxMessageBytes = maxMessageBytes;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof HandshakeComplete) {
            ChannelPipeline p = ctx.pipeline();
            ChannelHandlerContext decoder = p.context(WebSocketFrameDecoder.class);
            if (decoder != null && !(decoder.handler() instanceof MessageReader)) {
                p.replace(decoder.name(), decoder.name(), new MessageReader(maxMessageBytes));
            }
            if (p.get(WebSocketServerProtocolHandler.class) != null) {
                p.remove(WebSocketServerProtocolHandler.class);
            }
            ctx.fireUserEventTriggered(evt);
            p.remove(this);
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }
}
