package dev.crossbar.server.websocket;

import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.util.ReferenceCountUtil;

/**
 * Takes the protocol violations the frame decoder and Netty's UTF-8 check throw before Netty's
 * protocol handler sees them, and hands them to the connection's {@link ConnectionLifecycle},
 * which answers with the close code and the reason ({@link ConnectionLifecycle#protocolViolation}).
 * Then it gives its place to an {@link AfterViolation}, which drops what is still read and closes
 * the connection when the client's close frame comes.
 *
 * <p>Why here: the protocol handler closes the channel on any error that reaches it, at once,
 * while the client may still be sending (the rest of a message over {@code --max-message}); the
 * bytes still arriving then make the kernel reset the connection, which can destroy the close
 * frame before the client reads it, and a client that stops at its first failed write never
 * learns why. And frames read after a violation must not reach the protocol handler, which would
 * answer a close frame with a second one. Place it between Netty's {@code Utf8FrameValidator} and
 * the protocol handler, that is, just before the protocol handler once that has been added.
 *
 * <p>It handles only errors, so that the frames of a healthy connection pass it without a call.
 * Holds no state: one serves every pipeline.
 *
 * <p>Ownership: this handler touches no message; {@link AfterViolation} releases every message it
 * reads, passing none on.
 */
@Sharable
public final class ProtocolViolations extends ChannelInboundHandlerAdapter {

    public static final ProtocolViolations INSTANCE = new ProtocolViolations();

    private ProtocolViolations() {
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (!(cause instanceof CorruptedWebSocketFrameException violation)) {
            ctx.fireExceptionCaught(cause);
            return;
        }
        FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
        boolean answer = decoder == null || !decoder.invalidCloseFrame();
        boolean clientClosed = decoder != null && decoder.closeReceived();
        ConnectionLifecycle lifecycle = ConnectionLifecycle.of(ctx.pipeline());
        ctx.pipeline().replace(ctx.name(), ctx.name(), new AfterViolation(lifecycle));
        lifecycle.protocolViolation(violation, answer, clientClosed);
    }

    /**
     * What a connection that broke the protocol still reads: dropped (released), up to the
     * client's close frame, which closes the socket, as the client now waits for that; further
     * violations (from frames already decoded) have been answered.
     */
    static final class AfterViolation extends ChannelInboundHandlerAdapter {

        private final ConnectionLifecycle lifecycle;

        AfterViolation(ConnectionLifecycle lifecycle) {
            this.lifecycle = lifecycle;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            boolean close = msg instanceof CloseWebSocketFrame;
            ReferenceCountUtil.release(msg);
            if (close) {
                lifecycle.clientClosedAfterViolation();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (!(cause instanceof CorruptedWebSocketFrameException)) {
                ctx.fireExceptionCaught(cause);
            }
        }
    }
}
