package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.http.HandshakeFailures;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RawClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Abuse from outside while a lab's video stream runs beside it, which must lose nothing: 2,000
 * clients sending their headers one byte a second are all closed by the handshake timeout; a
 * flood of upgrades from one address is refused (429) by the per-address rate, every other
 * address unaffected.
 */
class AbuseIT {

    /** One second of MPEG-TS-sized video at about 1 Mbit/s: 30 messages of 4,136 bytes. */
    private static final int VIDEO_MESSAGE_BYTES = 4136;
    private static final long VIDEO_PERIOD_NANOS = 1_000_000_000L / 30;

    private static CrossbarServer start(UnaryOperator<ServerConfig.Builder> configure) {
        return CrossbarServer.start(configure.apply(ServerConfig.builder().listen("127.0.0.1:0").eventLoops(2)
                .shutdownGrace(Duration.ofSeconds(1))).build());
    }

    /** A 1 Mbit/s stream from /in/cam to /out/cam, sequence-numbered, running until stopped; then checked whole. */
    private static final class Video implements AutoCloseable {
        final JdkClient camera;
        final JdkClient viewer;
        final AtomicBoolean running = new AtomicBoolean(true);
        /** Messages sent so far: the check lets at least a third of a second of video run. */
        final AtomicInteger count = new AtomicInteger();
        final CompletableFuture<Integer> sent;

        Video(CrossbarServer server) {
            camera = JdkClient.connect(URI.create("ws://127.0.0.1:" + server.port() + "/in/cam"));
            viewer = JdkClient.connect(URI.create("ws://127.0.0.1:" + server.port() + "/out/cam"));
            await("video joined", Duration.ofSeconds(5), () -> server.connections() == 2);
            sent = CompletableFuture.supplyAsync(() -> {
                int n = 0;
                long next = System.nanoTime();
                while (running.get()) {
                    byte[] m = new byte[VIDEO_MESSAGE_BYTES];
                    ByteBuffer.wrap(m).putInt(n++);
                    camera.sendBinary(m);
                    count.incrementAndGet();
                    next += VIDEO_PERIOD_NANOS;
                    LockSupport.parkNanos(Math.max(0, next - System.nanoTime()));
                }
                return n;
            });
        }

        /** Stops the camera and checks that the viewer got every message, in order. */
        void checkNothingLost() throws Exception {
            await("video ran", Duration.ofSeconds(10), () -> count.get() >= 10);
            running.set(false);
            int n = sent.get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertTrue(n >= 10, "the camera sent " + n);
            for (int i = 0; i < n; i++) {
                byte[] got = viewer.take(Duration.ofSeconds(10)).data();
                assertEquals(VIDEO_MESSAGE_BYTES, got.length);
                assertEquals(i, ByteBuffer.wrap(got).getInt(), "message " + i);
            }
        }

        @Override
        public void close() {
            running.set(false);
            camera.close();
            viewer.close();
        }
    }

    @Test
    void twoThousandSlowHeaderClientsAreClosedByTheHandshakeTimeoutWhileTheVideoLosesNothing() throws Exception {
        int clients = 2000;
        try (CrossbarServer server = start(b -> b.handshakeTimeout(Duration.ofSeconds(10)));
             Video video = new Video(server)) {
            List<Socket> loris = new ArrayList<>();
            try {
                for (int i = 0; i < clients; i++) {
                    Socket s = new Socket();
                    // Four addresses of 500 each: within the default 1,000 per address.
                    s.bind(new InetSocketAddress("127.0.0." + (10 + i % 4), 0));
                    s.connect(new InetSocketAddress("127.0.0.1", server.port()), 10_000);
                    loris.add(s);
                }
                byte[] request = "GET /in/cam HTTP/1.1\r\nHost: relay\r\nUpgrade: websocket\r\n".getBytes(StandardCharsets.US_ASCII);
                long start = System.nanoTime();
                int open = clients;
                // One byte a second from each, until the relay has closed them all (bounded: 30 s).
                for (int second = 0; open > 0 && second < 30; second++) {
                    open = 0;
                    for (Socket s : loris) {
                        if (!s.isClosed() && !closedByPeer(s)) {
                            try {
                                OutputStream out = s.getOutputStream();
                                out.write(request[second % request.length]);
                                out.flush();
                                open++;
                            } catch (IOException reset) {
                                s.close();
                            }
                        }
                    }
                    Thread.sleep(1000);
                }
                long took = (System.nanoTime() - start) / 1_000_000;
                assertEquals(0, open, "slow clients still open after " + took + " ms");
                assertTrue(took >= 9_000, "closed after " + took + " ms, before the handshake timeout");
                assertTrue(server.handshakeFailures().count(HandshakeFailures.Reason.TIMEOUT) >= clients);
            } finally {
                for (Socket s : loris) {
                    s.close();
                }
            }
            video.checkNothingLost();
        }
    }

    /** Whether the relay has closed {@code s} (its reads end), without blocking. */
    private static boolean closedByPeer(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        s.setSoTimeout(1);
        try {
            return in.read() < 0;
        } catch (java.net.SocketTimeoutException stillOpen) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    @Test
    void aFloodOfUpgradesFromOneAddressIsRefusedByItsRateAndNoOneElseNotices() throws Exception {
        int flood = 300;
        try (CrossbarServer server = start(b -> b.maxConnectionRatePerAddress(20));
             Video video = new Video(server)) {
            ExecutorService pool = Executors.newFixedThreadPool(8);
            List<Future<String>> answers = new ArrayList<>();
            for (int i = 0; i < flood; i++) {
                answers.add(pool.submit(() -> {
                    try (RawClient c = new RawClient("127.0.0.2", server.port())) {
                        return c.upgrade("/lab/flood");
                    }
                }));
            }
            int upgraded = 0;
            int limited = 0;
            for (Future<String> f : answers) {
                String head = f.get(60, java.util.concurrent.TimeUnit.SECONDS);
                if (head.startsWith("HTTP/1.1 101")) {
                    upgraded++;
                } else {
                    assertTrue(head.startsWith("HTTP/1.1 429"), head);
                    limited++;
                }
            }
            pool.shutdown();
            assertTrue(limited > flood / 2, "refused " + limited + " of " + flood + " (upgraded " + upgraded + ")");
            assertEquals(limited, server.handshakeFailures().count(HandshakeFailures.Reason.CONNECTION_RATE));
            try (RawClient neighbour = new RawClient("127.0.0.3", server.port())) {
                assertTrue(neighbour.upgrade("/lab/flood").startsWith("HTTP/1.1 101"), "another address was refused");
            }
            video.checkNothingLost();
        }
    }
}
