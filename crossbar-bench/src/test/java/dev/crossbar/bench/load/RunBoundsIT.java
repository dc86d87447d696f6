package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A run ends on time whatever the relay does: relays nothing, or never answers the handshake. */
class RunBoundsIT {

    private EventLoopGroup group;

    @BeforeEach
    void start() {
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    }

    @AfterEach
    void stop() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }

    /** Accepts WebSocket clients and swallows every message: a relay that has locked up. */
    private Channel blackHole() {
        return new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(8192),
                                new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
                                        .websocketPath("/").checkStartsWith(true).build()),
                                new ChannelInboundHandlerAdapter() {
                                    @Override
                                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                        ReferenceCountUtil.release(msg);
                                    }
                                });
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
    }

    @Test
    void aRelayThatDeliversNothingEndsTheRunOnTimeWithEverythingLost() throws Exception {
        Channel server = blackHole();
        try {
            URI url = URI.create("ws://127.0.0.1:" + ((InetSocketAddress) server.localAddress()).getPort());
            LoadConfig c = LoadConfig.builder(Scenario.PINGPONG, url).warmup(Duration.ofMillis(100))
                    .duration(Duration.ofMillis(700)).settle(Duration.ZERO).drain(Duration.ofSeconds(30))
                    .drainQuiet(Duration.ofMillis(300)).build();
            long start = System.nanoTime();
            RunResult r = new LoadRun(c, new ExternalRelay(c.baseUri(), -1), 1).run();
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            // The window (128) fills, the sender parks, and the drain gives up after its quiet period.
            assertEquals(128.0, r.number("sent"), r.toString());
            assertEquals(128.0, r.number("lost"), r.toString());
            assertEquals(0.0, r.number("msgPerS"), r.toString());
            assertTrue(took.compareTo(Duration.ofSeconds(5)) < 0, "took " + took);
        } finally {
            server.close().awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aRelayThatNeverAnswersFailsTheConnectOnTime() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            URI url = URI.create("ws://127.0.0.1:" + silent.getLocalPort());
            LoadConfig c = LoadConfig.builder(Scenario.FANOUT, url).count(3)
                    .connectTimeout(Duration.ofMillis(500)).build();
            long start = System.nanoTime();
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> new LoadRun(c, new ExternalRelay(c.baseUri(), -1), 1).run());
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(e.getMessage().startsWith("connect"), e.getMessage());
            assertTrue(took.compareTo(Duration.ofSeconds(5)) < 0, "took " + took);
        }
    }
}
