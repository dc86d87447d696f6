package dev.crossbar.server.transport;

import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;

/**
 * Once the upgrade is done, lets the WebSocket frame decoder gather a frame that spans many socket
 * reads as a list of the reads instead of copying each into one growing buffer, then removes
 * itself.
 *
 * <p>Why: the decoder copies a frame's payload out of what it gathered anyway (and unmasks it), so
 * merging first is a second copy plus a copy per doubling of the buffer. For a 1 MiB message that
 * was a third of the relay's CPU; without it the relay spends 0.9 instead of 1.4 CPU-seconds per
 * GB (docs/benchmarks.md). Small frames arrive whole in one read, which either way is used as it
 * is. Handles no messages: only the handshake event, which it passes on.
 */
@Sharable
final class CompositeCumulation extends ChannelInboundHandlerAdapter {

    static final CompositeCumulation INSTANCE = new CompositeCumulation();

    private CompositeCumulation() {
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof HandshakeComplete) {
            if (ctx.pipeline().get(WebSocketFrameDecoder.class) instanceof ByteToMessageDecoder decoder) {
                decoder.setCumulator(ByteToMessageDecoder.COMPOSITE_CUMULATOR);
            }
            ctx.fireUserEventTriggered(evt);
            ctx.pipeline().remove(this);
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }
}
