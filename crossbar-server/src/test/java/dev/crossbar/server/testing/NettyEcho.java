package dev.crossbar.server.testing;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.URI;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A WebSocket client (Netty's) that sends every data frame it receives straight back, the same frame
 * (type, fin bit, bytes), and stops reading while its socket is over its high water mark: the host
 * side of a session test, with real back-pressure. Close frames complete {@code closed} with
 * (code, reason) and are answered by Netty's protocol handler.
 */
public final class NettyEcho {

    private static final EventLoopGroup GROUP = new MultiThreadIoEventLoopGroup(1,
            new DefaultThreadFactory("test-echo", true), NioIoHandler.newFactory());

    public final Channel channel;

    private NettyEcho(Channel channel) {
        this.channel = channel;
    }

    public static NettyEcho open(URI uri, CompletableFuture<Object[]> closed) {
        CompletableFuture<Void> handshake = new CompletableFuture<>();
        WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri(uri)
                .generateOriginHeader(false)
                .customHeaders(new DefaultHttpHeaders().add("User-Agent", "crossbar-test-echo-host"))
                .maxFramePayloadLength(64 * 1024 * 1024)
                .handleCloseFrames(true)
                .dropPongFrames(true)
                .handshakeTimeoutMillis(5000)
                .build();
        Channel ch = new Bootstrap().group(GROUP).channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(65536),
                                new CloseSeen(closed), new WebSocketClientProtocolHandler(config), new Echo(handshake, closed));
                    }
                })
                .connect(uri.getHost(), uri.getPort()).syncUninterruptibly().channel();
        handshake.orTimeout(10, TimeUnit.SECONDS).join();
        return new NettyEcho(ch);
    }

    /** Starts the closing handshake with {@code code} and {@code reason}. */
    public void sendClose(int code, String reason) {
        channel.writeAndFlush(new CloseWebSocketFrame(code, reason)).syncUninterruptibly();
    }

    public void abort() {
        channel.close();
    }

    /** Sees the relay's close frame before the protocol handler answers it. */
    private static final class CloseSeen extends ChannelInboundHandlerAdapter {
        private final CompletableFuture<Object[]> closed;

        CloseSeen(CompletableFuture<Object[]> closed) {
            this.closed = closed;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof CloseWebSocketFrame c) {
                closed.complete(new Object[] {c.statusCode(), c.reasonText()});
            }
            ctx.fireChannelRead(msg);
        }
    }

    private static final class Echo extends ChannelInboundHandlerAdapter {
        private final CompletableFuture<Void> handshake;
        private final CompletableFuture<Object[]> closed;

        Echo(CompletableFuture<Void> handshake, CompletableFuture<Object[]> closed) {
            this.handshake = handshake;
            this.closed = closed;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                handshake.complete(null);
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof WebSocketFrame f) {
                ctx.write(f, ctx.voidPromise());
            } else {
                io.netty.util.ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
            if (!ctx.channel().isWritable()) {
                ctx.channel().config().setAutoRead(false);
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                ctx.channel().config().setAutoRead(true);
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            closed.complete(new Object[] {-1, "socket closed"});
            handshake.completeExceptionally(new IllegalStateException("closed before handshake"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            handshake.completeExceptionally(cause);
            ctx.close();
        }
    }
}
