package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Each limit exceeded by a real client gets exactly its documented error, while a healthy client
 * on the same topic keeps receiving.
 */
class HostileInputIT {

    /**
     * Short enough to keep the slowloris test brief, long enough that no healthy client on a busy
     * machine takes longer to upgrade. Ping and idle timers keep their defaults here (far longer than
     * any test), so only {@link Keepalive}'s tests depend on them.
     */
    private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(2);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .handshakeTimeout(HANDSHAKE_TIMEOUT)
            .maxConnections(12)
            .maxConnectionsPerAddress(12)
            .maxTopics(4)
            .allowedOrigins(List.of("https://lab.example.org")));

    /** A publisher and a subscriber that must be undisturbed by whatever a test does. */
    private static final class Healthy implements AutoCloseable {
        final JdkClient pub;
        final JdkClient sub;
        int sent;

        Healthy(RelayServerExtension relay) {
            pub = JdkClient.connect(relay.ws("/in/healthy"));
            sub = JdkClient.connect(relay.ws("/out/healthy"));
            await("healthy pair joined", Duration.ofSeconds(5), () -> relay.server().topics().topics().stream()
                    .anyMatch(t -> t.key().name().equals("healthy") && t.members().length == 2));
        }

        void check() {
            String m = "still flowing " + sent++;
            pub.sendText(m);
            assertEquals(m, sub.take(Duration.ofSeconds(5)).string());
        }

        @Override
        public void close() {
            pub.close();
            sub.close();
        }
    }

    @Test
    void slowlorisIsClosedByTheHandshakeTimeout() throws Exception {
        try (Healthy healthy = new Healthy(relay); RawClient loris = new RawClient(relay.port())) {
            loris.send("GET /in/healthy HTTP/1.1\r\nHost: x\r\nUpgrade: web".getBytes(StandardCharsets.US_ASCII));
            long start = System.nanoTime();
            assertTrue(loris.closedByPeer(30_000), "slowloris connection still open");
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            // Not before the timeout (the bytes it sent are not what closed it); the upper bound is the
            // read's, generous for a busy machine.
            assertTrue(tookMillis >= HANDSHAKE_TIMEOUT.toMillis() - 100, "closed after " + tookMillis + " ms");
            healthy.check();
        }
    }

    /** Keepalive with short timers, in a relay of its own so no other test depends on them. */
    @Nested
    class Keepalive {

        private static final Duration PING = Duration.ofMillis(500);
        private static final Duration IDLE = Duration.ofSeconds(2);

        @RegisterExtension
        final RelayServerExtension relay = new RelayServerExtension(b -> b.pingInterval(PING).idleTimeout(IDLE));

        @Test
        void silentClientIsPingedThenClosedWith1001() throws Exception {
            try (Healthy healthy = new Healthy(relay); RawClient silent = new RawClient(relay.port())) {
                assertTrue(silent.upgrade("/in/healthy").startsWith("HTTP/1.1 101"));
                RawClient.Frame first = silent.readFrame(10_000);
                assertNotNull(first, "expected a ping");
                assertEquals(0x9, first.opcode(), "first frame to a silent client is a ping");
                RawClient.Frame close = silent.readUntilClose(20_000);
                assertNotNull(close, "silent client was never closed");
                assertEquals(1001, close.closeCode());
                assertTrue(close.closeReason().contains("idle"), close.closeReason());
                // The healthy JDK clients answer pings, so they outlive the idle timeout.
                healthy.check();
            }
        }

        @Test
        void clientThatAnswersPingsStaysConnected() throws Exception {
            try (Healthy healthy = new Healthy(relay)) {
                Thread.sleep(2 * IDLE.toMillis() + 1000); // more than twice the idle timeout, no data sent
                healthy.check();
            }
        }
    }

    @Test
    void invalidUtf8TextClosesWith1007() {
        try (Healthy healthy = new Healthy(relay); NettyClient bad = NettyClient.connect(relay.ws("/in/healthy"))) {
            bad.write(new TextWebSocketFrame(Unpooled.wrappedBuffer(new byte[] {'o', 'k', (byte) 0xC3, 0x28})));
            bad.flush();
            assertEquals(1007, bad.awaitClose(Duration.ofSeconds(5)).code());
            assertEquals(null, healthy.sub.poll(Duration.ofMillis(200)));
            healthy.check();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Text is checked whatever came before it on the connection: after ASCII, text with other
     * bytes is relayed when it is UTF-8 and closed with 1007 when not.
     */
    @Test
    void textIsStillCheckedOnceMessagesGoStraightFromTheDecoder() throws Exception {
        try (Healthy healthy = new Healthy(relay); NettyClient bad = NettyClient.connect(relay.ws("/in/healthy"))) {
            bad.sendText("ascii first");
            assertEquals("ascii first", healthy.sub.take(Duration.ofSeconds(5)).string());
            bad.sendText("h\u00e9llo \u2713, still text");
            assertEquals("h\u00e9llo \u2713, still text", healthy.sub.take(Duration.ofSeconds(5)).string());
            bad.write(new TextWebSocketFrame(Unpooled.wrappedBuffer(new byte[] {'o', 'k', (byte) 0xC3, 0x28})));
            bad.flush();
            assertEquals(1007, bad.awaitClose(Duration.ofSeconds(5)).code());
            assertEquals(null, healthy.sub.poll(Duration.ofMillis(200)), "the invalid text is not relayed");
            healthy.check();
        }
    }

    @Test
    void protocolViolationsCloseWith1002() throws Exception {
        try (Healthy healthy = new Healthy(relay)) {
            try (RawClient unmasked = new RawClient(relay.port())) {
                assertTrue(unmasked.upgrade("/in/healthy").startsWith("HTTP/1.1 101"));
                unmasked.send(RawClient.frame(0x82, new byte[] {1, 2, 3}, false));
                RawClient.Frame close = unmasked.readUntilClose(3000);
                assertNotNull(close);
                assertEquals(1002, close.closeCode());
            }
            try (NettyClient rsv = NettyClient.connect(relay.ws("/in/healthy"))) {
                rsv.write(new BinaryWebSocketFrame(true, 4, Unpooled.wrappedBuffer(new byte[] {1})));
                rsv.flush();
                assertEquals(1002, rsv.awaitClose(Duration.ofSeconds(5)).code());
            }
            try (RawClient orphan = new RawClient(relay.port())) {
                assertTrue(orphan.upgrade("/in/healthy").startsWith("HTTP/1.1 101"));
                orphan.send(RawClient.frame(0x80, new byte[] {9}, true)); // continuation with nothing to continue
                RawClient.Frame close = orphan.readUntilClose(3000);
                assertNotNull(close);
                assertEquals(1002, close.closeCode());
            }
            assertEquals(null, healthy.sub.poll(Duration.ofMillis(200)));
            healthy.check();
        }
    }

    @Test
    void originOutsideTheAllowListGets403() throws Exception {
        try (Healthy healthy = new Healthy(relay)) {
            try (RawClient evil = new RawClient(relay.port())) {
                String head = evil.upgrade("/out/healthy", "Origin: https://evil.example.com");
                assertTrue(head.startsWith("HTTP/1.1 403"), head);
            }
            try (RawClient good = new RawClient(relay.port())) {
                assertTrue(good.upgrade("/out/healthy", "Origin: https://lab.example.org").startsWith("HTTP/1.1 101"));
            }
            healthy.check();
        }
    }

    @Test
    void permessageDeflateIsNotNegotiated() throws Exception {
        try (Healthy healthy = new Healthy(relay); RawClient c = new RawClient(relay.port())) {
            String head = c.upgrade("/out/healthy", "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits");
            assertTrue(head.startsWith("HTTP/1.1 101"), head);
            assertFalse(head.toLowerCase().contains("sec-websocket-extensions"), head);
            // The session joins its topic when the handshake has completed, just after the 101 is
            // written (and, by default, after moving to the topic's home loop): wait for it.
            await("raw subscriber joined", Duration.ofSeconds(10), () -> relay.server().topics().topics().stream()
                    .anyMatch(t -> t.key().name().equals("healthy") && t.members().length == 3));
            healthy.check();
            RawClient.Frame f = c.readFrame(5000);
            assertNotNull(f);
            assertEquals(0x1, f.opcode(), "uncompressed text frame, RSV1 clear");
        }
    }

    @Test
    void connectionLimitRefusesWith503BeforeTheUpgrade() throws Exception {
        try (Healthy healthy = new Healthy(relay)) {
            List<RawClient> held = new java.util.ArrayList<>();
            try {
                await("healthy counted", Duration.ofSeconds(5), () -> relay.server().openConnections() == 2);
                for (int i = 0; i < 10; i++) {
                    RawClient c = new RawClient(relay.port());
                    held.add(c);
                    assertTrue(c.upgrade("/out/healthy").startsWith("HTTP/1.1 101"));
                }
                try (RawClient over = new RawClient(relay.port())) {
                    String head = over.upgrade("/out/healthy");
                    assertTrue(head.startsWith("HTTP/1.1 503"), head);
                }
            } finally {
                for (RawClient c : held) {
                    c.close();
                }
            }
            await("released", Duration.ofSeconds(5), () -> relay.server().openConnections() == 2);
            healthy.check();
        }
    }

    @Test
    void topicLimitRefusesWith503() throws Exception {
        try (Healthy healthy = new Healthy(relay);
             JdkClient t2 = JdkClient.connect(relay.ws("/t2"));
             JdkClient t3 = JdkClient.connect(relay.ws("/t3"));
             JdkClient t4 = JdkClient.connect(relay.ws("/t4"));
             RawClient t5 = new RawClient(relay.port())) {
            await("4 topics", Duration.ofSeconds(5), () -> relay.server().topics().size() == 4);
            String head = t5.upgrade("/t5");
            assertTrue(head.startsWith("HTTP/1.1 503"), head);
            try (JdkClient sameTopic = JdkClient.connect(relay.ws("/t4"))) {
                assertTrue(sameTopic.ws != null, "joining an existing topic still works");
            }
            healthy.check();
        }
    }
}
