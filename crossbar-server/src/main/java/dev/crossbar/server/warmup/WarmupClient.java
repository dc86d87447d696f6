package dev.crossbar.server.warmup;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One connection of the warm-up's traffic: a Netty WebSocket client that counts the data frames it
 * receives (into a counter shared by all of them) and drops them.
 *
 * <p>Ownership: a received frame is released by {@link SimpleChannelInboundHandler} after it is
 * counted; a frame sent is the caller's buffer, released by the channel once written.
 */
final class WarmupClient {

    private static final int HANDSHAKE_TIMEOUT_MILLIS = 5_000;

    private final Channel channel;

    private WarmupClient(Channel channel) {
        this.channel = channel;
    }

    /** Connects to {@code path} on the relay at {@code relay} and completes the upgrade, or throws. */
    static WarmupClient connect(EventLoopGroup group, Class<? extends SocketChannel> socket, InetSocketAddress relay,
                                String path, int maxFrame, AtomicLong received) throws Exception {
        URI uri = new URI("ws", null, relay.getHostString(), relay.getPort(), path, null, null);
        WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri(uri)
                .generateOriginHeader(false)
                .customHeaders(new DefaultHttpHeaders().add("User-Agent", "crossbar-warm-up"))
                .maxFramePayloadLength(maxFrame)
                .handshakeTimeoutMillis(HANDSHAKE_TIMEOUT_MILLIS)
                .build();
        CompletableFuture<Void> upgraded = new CompletableFuture<>();
        ChannelFuture connected = new Bootstrap().group(group).channel(socket)
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(8192),
                                new WebSocketClientProtocolHandler(config), new Counter(upgraded, received));
                    }
                })
                .connect(relay);
        if (!connected.await(HANDSHAKE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS) || !connected.isSuccess()) {
            connected.channel().close();
            throw new IllegalStateException("cannot connect to " + uri, connected.cause());
        }
        try {
            upgraded.get(HANDSHAKE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            connected.channel().close();
            throw e;
        }
        return new WarmupClient(connected.channel());
    }

    /**
     * A connection that is no client: it writes {@code line} (perhaps nothing) and hangs up, as a
     * TCP health check, a port scanner or a benchmark's readiness probe does. Returns once it is
     * closed here; the relay reads the end of the stream after that.
     */
    static void probe(EventLoopGroup group, Class<? extends SocketChannel> socket, InetSocketAddress relay,
                      String line) {
        ChannelFuture connected = new Bootstrap().group(group).channel(socket)
                .handler(new ChannelInboundHandlerAdapter()) // whatever the relay answers is released by the pipeline
                .connect(relay);
        if (!connected.awaitUninterruptibly(HANDSHAKE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)
                || !connected.isSuccess()) {
            connected.channel().close();
            throw new IllegalStateException("cannot connect to " + relay, connected.cause());
        }
        // The line's buffer is the channel's once written; the close follows the write.
        connected.channel().writeAndFlush(Unpooled.copiedBuffer(line, StandardCharsets.US_ASCII))
                .addListener(ChannelFutureListener.CLOSE)
                .channel().closeFuture().awaitUninterruptibly(HANDSHAKE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Writes one message as one frame and flushes it, as browsers and most clients do. Takes {@code payload}. */
    void send(ByteBuf payload, boolean text) {
        channel.writeAndFlush(text ? new TextWebSocketFrame(payload) : new BinaryWebSocketFrame(payload),
                channel.voidPromise());
    }

    ChannelFuture close() {
        return channel.close();
    }

    /** Sends a close frame (1000); the future completes when the relay has answered and closed the connection. */
    ChannelFuture closeWithFrame() {
        channel.writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.NORMAL_CLOSURE), channel.voidPromise());
        return channel.closeFuture();
    }

    /** Counts data frames; completes {@code upgraded} when the handshake has. */
    private static final class Counter extends SimpleChannelInboundHandler<WebSocketFrame> {
        private final CompletableFuture<Void> upgraded;
        private final AtomicLong received;

        Counter(CompletableFuture<Void> upgraded, AtomicLong received) {
            this.upgraded = upgraded;
            this.received = received;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                upgraded.complete(null);
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
            if (frame instanceof BinaryWebSocketFrame || frame instanceof TextWebSocketFrame) {
                received.incrementAndGet();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            upgraded.completeExceptionally(new IllegalStateException("closed before the upgrade"));
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            upgraded.completeExceptionally(cause);
            ctx.close();
        }
    }
}
