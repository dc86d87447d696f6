package dev.crossbar.server.transport;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Once the WebSocket codec has found a protocol violation, drops every frame that still comes up
 * the pipeline, so nothing a failing client sent after the violation reaches the assembler and the
 * topic.
 *
 * <p>Why: one socket read can hold many frames. When Netty's UTF-8 validator rejects one fragment
 * of a text message, it sends 1007 and throws, but the frame decoder goes on passing up the frames
 * it already decoded from that read, and the validator no longer checks them. Without this handler
 * the assembler would complete the message from the remaining fragments (minus the rejected one)
 * and the relay would send other clients text that is not UTF-8 (Autobahn case 6.3.2, seen by the
 * echo peer of {@code src/conformance}).
 *
 * <p>The violation itself has been answered by the handler that found it (1002, 1007, 1009, or no
 * close frame after an invalid close frame) and the protocol handler closes the channel; it is a
 * client's fault, so it is logged at DEBUG here and not passed on to the session as an unexpected
 * error.
 *
 * <p>Ownership: a frame passed on is passed on as it came; a dropped frame is released here.
 */
final class DropAfterViolation extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(DropAfterViolation.class);

    private boolean violated;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (violated) {
            ReferenceCountUtil.release(msg);
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof DecoderException) {
            violated = true;
            log.debug("{} protocol violation: {}", ctx.channel(), cause.getMessage());
            ctx.close();
        } else {
            ctx.fireExceptionCaught(cause);
        }
    }
}
