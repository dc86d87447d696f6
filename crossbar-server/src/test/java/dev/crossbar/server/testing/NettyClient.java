package dev.crossbar.server.testing;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A WebSocket client on Netty that can send frames the JDK client will not: fragments, raw
 * continuation frames, oversized messages, and bursts written without waiting.
 *
 * <p>Ownership: every received frame's content is copied into a {@link Received} and released at
 * once, so tests hold no buffers.
 */
public final class NettyClient implements AutoCloseable {

    private static final EventLoopGroup GROUP = new MultiThreadIoEventLoopGroup(2,
            new DefaultThreadFactory("test-client", true), NioIoHandler.newFactory());
    /** Stalled clients get their own loop, so a test's healthy clients never share one with them. */
    private static final EventLoopGroup STALLED_GROUP = new MultiThreadIoEventLoopGroup(1,
            new DefaultThreadFactory("test-client-stalled", true), NioIoHandler.newFactory());

    /** How long a connect or a write may take before the test fails instead of hanging. */
    private static final Duration WRITE_TIMEOUT = Duration.ofSeconds(30);

    public final Channel channel;
    private final Inbox inbox = new Inbox(() -> "");
    public final CompletableFuture<CloseInfo> closed = new CompletableFuture<>();

    /** The close frame the relay sent (code, reason), or code -1 if the socket closed without one. */
    public record CloseInfo(int code, String reason) {
    }

    private NettyClient(URI uri, int maxFrame) throws InterruptedException {
        this(uri, maxFrame, 0, null, new DefaultHttpHeaders());
    }

    /**
     * @param receiveBuffer SO_RCVBUF for a stalled client (0: the default, on the shared loops)
     * @param ssl for wss://; null for ws://
     * @param headers extra request headers
     */
    private NettyClient(URI uri, int maxFrame, int receiveBuffer, SslContext ssl, HttpHeaders headers)
            throws InterruptedException {
        CompletableFuture<Void> handshake = new CompletableFuture<>();
        WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri(uri)
                .generateOriginHeader(false)
                .customHeaders(new DefaultHttpHeaders().add(headers).add("User-Agent", "crossbar-test-netty"))
                .maxFramePayloadLength(maxFrame)
                .handleCloseFrames(false)
                .dropPongFrames(true)
                .handshakeTimeoutMillis(5000)
                .build();
        Bootstrap bootstrap = new Bootstrap().group(receiveBuffer > 0 ? STALLED_GROUP : GROUP)
                .channel(NioSocketChannel.class);
        if (receiveBuffer > 0) {
            bootstrap.option(io.netty.channel.ChannelOption.SO_RCVBUF, receiveBuffer);
        }
        ChannelFuture connected = bootstrap
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (ssl != null) {
                            ch.pipeline().addLast("tls", ssl.newHandler(ch.alloc(), uri.getHost(), uri.getPort()));
                        }
                        ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(65536),
                                new WebSocketClientProtocolHandler(config),
                                new SimpleChannelInboundHandler<WebSocketFrame>() {
                                    @Override
                                    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                        if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                                            handshake.complete(null);
                                        }
                                        ctx.fireUserEventTriggered(evt);
                                    }

                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame f) {
                                        if (f instanceof CloseWebSocketFrame c) {
                                            closed.complete(new CloseInfo(c.statusCode(), c.reasonText()));
                                            ctx.close();
                                        } else if (f instanceof TextWebSocketFrame || f instanceof BinaryWebSocketFrame
                                                || f instanceof ContinuationWebSocketFrame) {
                                            if (!f.isFinalFragment() || f instanceof ContinuationWebSocketFrame) {
                                                inbox.add(new Received(false, "UNEXPECTED FRAGMENT".getBytes(StandardCharsets.UTF_8)));
                                            }
                                            inbox.add(new Received(f instanceof TextWebSocketFrame, ByteBufUtil.getBytes(f.content())));
                                        }
                                    }

                                    @Override
                                    public void channelInactive(ChannelHandlerContext ctx) {
                                        closed.complete(new CloseInfo(-1, "socket closed"));
                                        handshake.completeExceptionally(new IllegalStateException("closed before handshake"));
                                    }

                                    @Override
                                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                        handshake.completeExceptionally(cause);
                                        ctx.close();
                                    }
                                });
                    }
                })
                .connect(uri.getHost(), uri.getPort());
        channel = connected.channel();
        await(connected, "connect to " + uri);
        handshake.orTimeout(10, TimeUnit.SECONDS).join();
    }

    public static NettyClient connect(URI uri) {
        return connect(uri, 64 * 1024 * 1024);
    }

    /** Connects over TLS when {@code ssl} is not null, with extra request headers. */
    public static NettyClient connect(URI uri, SslContext ssl, HttpHeaders headers) {
        try {
            return new NettyClient(uri, 64 * 1024 * 1024, 0, ssl, headers);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while connecting");
        }
    }

    public static NettyClient connect(URI uri, int maxFrame) {
        try {
            return new NettyClient(uri, maxFrame);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while connecting");
        }
    }

    /**
     * A client that completes the upgrade and then stops reading, with a small receive buffer so
     * the relay feels it soon: a stalled viewer whose socket stays open.
     */
    public static NettyClient connectStalled(URI uri) {
        try {
            NettyClient c = new NettyClient(uri, 64 * 1024 * 1024, 4096, null, new DefaultHttpHeaders());
            c.channel.config().setAutoRead(false);
            return c;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while connecting");
        }
    }

    public void sendText(String s) {
        await(channel.writeAndFlush(new TextWebSocketFrame(s)), "text write");
    }

    public void sendBinary(byte[] b) {
        await(channel.writeAndFlush(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(b))), "binary write");
    }

    /** Writes without flushing or waiting; call {@link #flush()} after a burst. */
    public void write(WebSocketFrame frame) {
        channel.write(frame, channel.voidPromise());
    }

    public void flush() {
        channel.flush();
    }

    /** Sends {@code data} as {@code parts} fragments: a first data frame and continuations. */
    public void sendFragmented(boolean text, byte[] data, int parts) {
        ChannelFuture last = writeFragmented(text, data, parts);
        channel.flush();
        await(last, "fragmented write");
    }

    /**
     * Writes {@code data} as {@code parts} fragments without flushing or waiting; call
     * {@link #flush()} after. Returns the last fragment's write.
     */
    public ChannelFuture writeFragmented(boolean text, byte[] data, int parts) {
        int step = Math.max(1, (data.length + parts - 1) / parts);
        int offset = 0;
        boolean first = true;
        ChannelFuture last;
        do {
            int len = Math.min(step, data.length - offset);
            boolean fin = offset + len >= data.length;
            ByteBuf chunk = Unpooled.wrappedBuffer(data, offset, len);
            WebSocketFrame f = first
                    ? (text ? new TextWebSocketFrame(fin, 0, chunk) : new BinaryWebSocketFrame(fin, 0, chunk))
                    : new ContinuationWebSocketFrame(fin, 0, chunk);
            last = channel.write(f);
            first = false;
            offset += len;
        } while (offset < data.length);
        return last;
    }

    /**
     * Waits for {@code f} for at most {@link #WRITE_TIMEOUT}: a relay that stops reading must fail
     * the test, not hang it. Rethrows the operation's failure.
     */
    private static void await(io.netty.util.concurrent.Future<?> f, String what) {
        if (!f.awaitUninterruptibly(WRITE_TIMEOUT.toMillis())) {
            throw new AssertionError(what + " not done within " + WRITE_TIMEOUT);
        }
        if (!f.isSuccess()) {
            throw new AssertionError(what + " failed", f.cause());
        }
    }

    public Received take(Duration timeout) {
        return inbox.take(timeout);
    }

    public Received take() {
        return take(Duration.ofSeconds(10));
    }

    public Received poll(Duration timeout) throws InterruptedException {
        return inbox.poll(timeout);
    }

    public int pending() {
        return inbox.size();
    }

    public CloseInfo awaitClose(Duration timeout) {
        return closed.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    @Override
    public void close() {
        if (channel.isActive()) {
            channel.writeAndFlush(new CloseWebSocketFrame(1000, "bye")).awaitUninterruptibly(2, TimeUnit.SECONDS);
        }
        channel.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
    }
}
