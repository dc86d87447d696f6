package dev.crossbar.server.tls;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
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
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;

/**
 * A throwaway measuring tool, not a test: WebSocket handshakes per second (with or without a
 * token, over ws or wss) and relayed throughput from one publisher to one subscriber, against a
 * relay started separately (the fat jar). Loopback only; every loop is bounded in time.
 *
 * <pre>
 * mint SECRET AUDIENCE TOPIC SCOPE SECONDS    prints an HS256 token
 * handshakes URL SECONDS THREADS [TOKEN]     e.g. handshakes ws://127.0.0.1:8080/out/b 10 8 eyJ...
 * throughput BASE SECONDS SIZE [PUBTOKEN SUBTOKEN]   e.g. throughput wss://127.0.0.1:8443 10 65536
 * </pre>
 * The client trusts any certificate: it measures cost, not trust.
 */
public final class AuthTlsProbe {

    private static final io.netty.util.AttributeKey<Runnable> PUMP = io.netty.util.AttributeKey.valueOf("pump");

    private AuthTlsProbe() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "mint" -> System.out.println(mint(args[1], args[2], args[3], args[4], Long.parseLong(args[5])));
            case "handshakes" -> handshakes(URI.create(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                    args.length > 4 ? args[4] : null);
            case "throughput" -> throughput(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                    args.length > 4 ? args[4] : null, args.length > 5 ? args[5] : null);
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    private static String mint(String secret, String audience, String topic, String scope, long seconds)
            throws Exception {
        com.nimbusds.jwt.SignedJWT jwt = new com.nimbusds.jwt.SignedJWT(
                new com.nimbusds.jose.JWSHeader(com.nimbusds.jose.JWSAlgorithm.HS256),
                new com.nimbusds.jwt.JWTClaimsSet.Builder().audience(audience).claim("topic", topic).claim("scope", scope)
                        .expirationTime(new java.util.Date(System.currentTimeMillis() + seconds * 1000)).build());
        jwt.sign(new com.nimbusds.jose.crypto.MACSigner(secret.getBytes(StandardCharsets.UTF_8)));
        return jwt.serialize();
    }

    private static void handshakes(URI uri, int seconds, int threads, String token) throws Exception {
        boolean tls = uri.getScheme().equals("wss");
        SSLSocketFactory sslFactory = tls ? trustAll().getSocketFactory() : null;
        byte[] request = ("GET " + uri.getRawPath() + " HTTP/1.1\r\nHost: " + uri.getHost() + "\r\n"
                + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                + "Sec-WebSocket-Version: 13\r\n" + (token == null ? "" : "Authorization: Bearer " + token + "\r\n")
                + "\r\n").getBytes(StandardCharsets.US_ASCII);
        AtomicLong ok = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        java.util.concurrent.atomic.AtomicReference<String> firstError = new java.util.concurrent.atomic.AtomicReference<>();
        long warmupEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        long end = warmupEnd + TimeUnit.SECONDS.toNanos(seconds);
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> {
                byte[] buf = new byte[4096];
                while (System.nanoTime() < end) {
                    boolean counted = System.nanoTime() > warmupEnd;
                    try (Socket s = tls ? sslFactory.createSocket(uri.getHost(), uri.getPort())
                            : new Socket(uri.getHost(), uri.getPort())) {
                        s.setSoTimeout(5000);
                        OutputStream out = s.getOutputStream();
                        out.write(request);
                        out.flush();
                        InputStream in = s.getInputStream();
                        int n = in.read(buf);
                        String status = n >= 12 ? new String(buf, 0, 12, StandardCharsets.US_ASCII) : "";
                        if (counted) {
                            (status.equals("HTTP/1.1 101") ? ok : status.startsWith("HTTP/1.1 4") ? refused : failed)
                                    .incrementAndGet();
                        }
                        // Close frame (masked, empty) then go: a polite client leaving.
                        out.write(new byte[] {(byte) 0x88, (byte) 0x80, 1, 2, 3, 4});
                        out.flush();
                    } catch (Exception e) {
                        firstError.compareAndSet(null, e.toString());
                        if (counted) {
                            failed.incrementAndGet();
                        }
                    }
                }
            });
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        System.out.printf("handshakes %s token=%s threads=%d: %.0f/s upgraded (101), %.0f/s refused (4xx), %d failed%s%n",
                uri, token != null, threads, ok.get() / (double) seconds, refused.get() / (double) seconds, failed.get(),
                firstError.get() == null ? "" : " (first: " + firstError.get() + ")");
    }

    private static SSLContext trustAll() throws Exception {
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, InsecureTrustManagerFactory.INSTANCE.getTrustManagers(), null);
        return ctx;
    }

    private static void throughput(String base, int seconds, int size, String pubToken, String subToken) throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
        try {
            boolean tls = base.startsWith("wss");
            SslContext ssl = tls ? SslContextBuilder.forClient().trustManager(InsecureTrustManagerFactory.INSTANCE).build() : null;
            AtomicLong received = new AtomicLong();
            Channel sub = connect(group, URI.create(base + "/out/probe"), ssl, subToken, received);
            Channel pub = connect(group, URI.create(base + "/in/probe"), ssl, pubToken, null);
            Thread.sleep(500);
            byte[] payload = new byte[size];
            long start = System.nanoTime();
            long end = start + TimeUnit.SECONDS.toNanos(seconds);
            long startBytes = received.get();
            CompletableFuture<Void> done = new CompletableFuture<>();
            // Write while the socket takes it, resume when it drains: the publisher is never the limit.
            Runnable pump = () -> {
                if (System.nanoTime() > end) {
                    done.complete(null);
                    return;
                }
                while (pub.isWritable()) {
                    pub.write(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(payload)), pub.voidPromise());
                }
                pub.flush();
            };
            pub.attr(PUMP).set(pump);
            pub.eventLoop().execute(pump);
            pub.eventLoop().scheduleAtFixedRate(pump, 100, 100, TimeUnit.MILLISECONDS);
            done.get(seconds + 10L, TimeUnit.SECONDS);
            long bytes = received.get() - startBytes;
            double secs = (System.nanoTime() - start) / 1e9;
            System.out.printf("throughput %s size=%d: %.1f MB/s, %.0f messages/s relayed%n", base, size,
                    bytes / secs / 1e6, bytes / (double) size / secs);
            pub.close().sync();
            sub.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    private static Channel connect(EventLoopGroup group, URI uri, SslContext ssl, String token, AtomicLong received)
            throws Exception {
        CompletableFuture<Void> handshake = new CompletableFuture<>();
        DefaultHttpHeaders headers = new DefaultHttpHeaders();
        if (token != null) {
            headers.add("Authorization", "Bearer " + token);
        }
        WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri(uri).customHeaders(headers).maxFramePayloadLength(16 * 1024 * 1024)
                .handshakeTimeoutMillis(5000).build();
        Channel ch = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(io.netty.channel.ChannelOption.WRITE_BUFFER_WATER_MARK,
                        new io.netty.channel.WriteBufferWaterMark(512 * 1024, 1024 * 1024))
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        if (ssl != null) {
                            c.pipeline().addLast(ssl.newHandler(c.alloc(), uri.getHost(), uri.getPort()));
                        }
                        c.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(65536),
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
                                    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
                                        Runnable pump = ctx.channel().attr(PUMP).get();
                                        if (pump != null && ctx.channel().isWritable()) {
                                            pump.run();
                                        }
                                        ctx.fireChannelWritabilityChanged();
                                    }

                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame f) {
                                        if (received != null) {
                                            received.addAndGet(f.content().readableBytes());
                                        }
                                    }
                                });
                    }
                }).connect(uri.getHost(), uri.getPort()).sync().channel();
        handshake.get(10, TimeUnit.SECONDS);
        return ch;
    }
}
