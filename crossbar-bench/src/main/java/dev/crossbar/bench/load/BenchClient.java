package dev.crossbar.bench.load;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler.ClientHandshakeStateEvent;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The load generator's WebSocket connections: one event-loop group, many connections, each a
 * standard client pipeline (masked frames) ending in the scenario's handler:
 *
 * <pre>
 *  socket → http-codec → http-aggregator → ws-protocol (handshake, close, pong) → frame-aggregator → handler
 * </pre>
 *
 * The frame aggregator rebuilds fragmented messages, so a relay that fragments (the Go original
 * does, above 8 KiB) is checked message by message like one that does not.
 */
final class BenchClient implements AutoCloseable {

    /** Handshakes in progress at once: keeps the relay's accept backlog from overflowing. */
    static final int MAX_PENDING_HANDSHAKES = 256;
    /** Largest message accepted: well above any relay's limit, so merged frames arrive whole to be counted. */
    static final int MAX_MESSAGE_BYTES = 128 * 1024 * 1024;
    static final int MAX_UPGRADE_RESPONSE_BYTES = 16 * 1024;

    private final EventLoopGroup group;
    private final Class<? extends SocketChannel> channelClass;
    private final List<InetSocketAddress> bindAddresses;
    private int nextBind;

    BenchClient(int threads, List<String> bindAddresses) {
        boolean epoll = Epoll.isAvailable();
        this.group = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("bench-io"),
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        this.channelClass = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        this.bindAddresses = new ArrayList<>();
        for (String a : bindAddresses) {
            this.bindAddresses.add(new InetSocketAddress(a, 0));
        }
    }

    EventLoopGroup group() {
        return group;
    }

    /**
     * Opens one WebSocket connection; the future completes with the channel once the handshake is
     * done, or fails (refused, timed out, closed during the handshake).
     */
    Future<Channel> connect(URI uri, ChannelHandler handler, long handshakeTimeoutMillis) {
        requireNonNull(uri, "uri");
        io.netty.channel.EventLoop loop = group.next();
        Promise<Channel> ready = loop.newPromise();
        WebSocketClientProtocolConfig ws = WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri(uri)
                .maxFramePayloadLength(MAX_MESSAGE_BYTES)
                .handshakeTimeoutMillis(handshakeTimeoutMillis)
                .handleCloseFrames(true)
                .dropPongFrames(true)
                .withUTF8Validator(false)
                .build();
        Bootstrap b = new Bootstrap()
                .group(loop)
                .channel(channelClass)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) handshakeTimeoutMillis)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast("http-codec", new HttpClientCodec())
                                .addLast("http-aggregator", new HttpObjectAggregator(MAX_UPGRADE_RESPONSE_BYTES))
                                .addLast("ws-protocol", new WebSocketClientProtocolHandler(ws))
                                .addLast("frame-aggregator", new WebSocketFrameAggregator(MAX_MESSAGE_BYTES))
                                .addLast("ready", new HandshakeWatcher(ready))
                                .addLast("handler", handler);
                    }
                });
        InetSocketAddress remote = new InetSocketAddress(uri.getHost(), uri.getPort());
        ChannelFuture cf = bindAddresses.isEmpty() ? b.connect(remote) : b.connect(remote, nextBindAddress());
        cf.addListener(f -> {
            if (!f.isSuccess()) {
                ready.tryFailure(f.cause());
            } else {
                cf.channel().closeFuture().addListener(c ->
                        ready.tryFailure(new IllegalStateException("closed before the WebSocket handshake completed")));
            }
        });
        return ready;
    }

    private synchronized InetSocketAddress nextBindAddress() {
        InetSocketAddress a = bindAddresses.get(nextBind);
        nextBind = (nextBind + 1) % bindAddresses.size();
        return a;
    }

    /**
     * Connects every URI with its handler, at most {@link #MAX_PENDING_HANDSHAKES} at a time.
     *
     * @throws IllegalStateException naming the first failure, after closing what did connect
     */
    List<Channel> connectAll(List<URI> uris, List<? extends ChannelHandler> hs, long timeoutMillis)
            throws InterruptedException {
        return connectAll(uris, hs, timeoutMillis, 0);
    }

    /**
     * Connects every URI with its handler, at most {@link #MAX_PENDING_HANDSHAKES} at a time and,
     * with a rate, starting at most {@code perSecond} connections a second (the clients of a
     * campus arrive over time, not in one burst).
     *
     * @param perSecond connections started per second; 0 for no pacing
     * @throws IllegalStateException naming the first failure, after closing what did connect
     */
    List<Channel> connectAll(List<URI> uris, List<? extends ChannelHandler> hs, long timeoutMillis, double perSecond)
            throws InterruptedException {
        Semaphore permits = new Semaphore(MAX_PENDING_HANDSHAKES);
        List<Future<Channel>> futures = new ArrayList<>(uris.size());
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        for (int i = 0; i < uris.size(); i++) {
            if (perSecond > 0) {
                long due = start + (long) (i * 1e9 / perSecond);
                long wait = Math.min(due, deadline) - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0 || !permits.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                closeAll(futures);
                throw new IllegalStateException("connect: " + i + " of " + uris.size()
                        + " connections made within " + timeoutMillis + " ms");
            }
            Future<Channel> f = connect(uris.get(i), hs.get(i), Math.max(1, timeoutMillis));
            f.addListener(x -> permits.release());
            futures.add(f);
        }
        List<Channel> channels = new ArrayList<>(uris.size());
        for (Future<Channel> f : futures) {
            long left = deadline - System.nanoTime();
            if (!f.await(Math.max(0, left), TimeUnit.NANOSECONDS) || !f.isSuccess()) {
                closeAll(futures);
                Throwable cause = f.cause();
                throw new IllegalStateException("connect: " + uris.get(futures.indexOf(f)) + ": "
                        + (cause == null ? "timed out after " + timeoutMillis + " ms" : cause.toString()), cause);
            }
            channels.add(f.getNow());
        }
        return channels;
    }

    private static void closeAll(List<Future<Channel>> futures) {
        for (Future<Channel> f : futures) {
            f.addListener(x -> {
                if (x.isSuccess()) {
                    ((Channel) x.getNow()).close();
                }
            });
        }
    }

    /** Runs an empty task on every loop and waits: afterwards, what the loops wrote is visible here. */
    void barrier() {
        for (EventExecutor e : group) {
            e.submit(() -> { }).syncUninterruptibly();
        }
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /** Completes the connection's promise when the handshake is done, then steps out of the pipeline. */
    private static final class HandshakeWatcher extends ChannelInboundHandlerAdapter {
        private final Promise<Channel> ready;

        HandshakeWatcher(Promise<Channel> ready) {
            this.ready = ready;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt == ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                // Large frames span many reads; gather them without merge copies (the decoder
                // copies the payload out anyway), as the relay does: FrameDecoder.
                if (ctx.pipeline().get(WebSocketFrameDecoder.class) instanceof ByteToMessageDecoder decoder) {
                    decoder.setCumulator(ByteToMessageDecoder.COMPOSITE_CUMULATOR);
                }
                ctx.pipeline().remove(this);
                ready.trySuccess(ctx.channel());
            } else if (evt == ClientHandshakeStateEvent.HANDSHAKE_TIMEOUT) {
                ready.tryFailure(new IllegalStateException("WebSocket handshake timed out"));
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ready.tryFailure(cause);
            ctx.close();
        }
    }
}
