package dev.crossbar.bench.load;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The load generator's own first connection, spent on an echo server of its own before it meets
 * the relay: a fresh generator JVM took about half a second over its first handshake and message
 * (loading and interpreting its HTTP and WebSocket codecs), and tens of milliseconds after one
 * round trip, which {@link FirstContact} must not bill to the relay. {@link #ROUNDS} handshakes
 * and messages; the server lives for this call only. What remains of the generator's share shows
 * in the uWebSockets peer's figure, a relay that answers in microseconds.
 */
final class ClientWarmUp {

    /** Longest the round trips may take, connects included; a generator that cannot manage them has bigger problems. */
    static final long TIMEOUT_MILLIS = 5_000;
    /** Round trips, each a fresh connection: enough that the codecs' classes are loaded and their first compilations queued. */
    static final int ROUNDS = 20;

    private ClientWarmUp() {
    }

    /** {@link #ROUNDS} round trips through {@code client}'s pipeline; gives up quietly after {@link #TIMEOUT_MILLIS}. */
    static void run(BenchClient client) throws InterruptedException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(8192),
                                    new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
                                            .websocketPath("/").checkStartsWith(true).build()),
                                    new Echo());
                        }
                    })
                    .bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
            try {
                URI uri = URI.create("ws://127.0.0.1:" + ((InetSocketAddress) server.localAddress()).getPort() + "/warm");
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS);
                for (int i = 0; i < ROUNDS && System.nanoTime() < deadline; i++) {
                    roundTrip(client, uri, deadline);
                }
            } finally {
                server.close().awaitUninterruptibly(LoadRun.CLOSE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }

    /** Connects, sends one message, waits for it back, closes. */
    private static void roundTrip(BenchClient client, URI uri, long deadline) throws InterruptedException {
        MessageFormat format = new MessageFormat(FirstContact.SIZE);
        RunClock clock = new RunClock();
        BenchHandler h = new BenchHandler(loop -> new IntegrityChecker(format, 1, null, clock, null), null, new AtomicLong());
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        Channel ch = client.connectAll(List.of(uri), List.of(h), Math.max(1, left)).get(0);
        ch.eventLoop().execute(() -> ch.writeAndFlush(MaskedFrames.encode(ch.alloc(), format, 0, 0,
                System.nanoTime(), ThreadLocalRandom.current().nextInt())));
        while (h.checker().delivered() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        ch.close().awaitUninterruptibly(LoadRun.CLOSE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Sends each binary message back. Ownership: passes the frame on to the write, which releases it. */
    private static final class Echo extends SimpleChannelInboundHandler<BinaryWebSocketFrame> {
        Echo() {
            super(false);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, BinaryWebSocketFrame frame) {
            ctx.writeAndFlush(frame);
        }
    }
}
