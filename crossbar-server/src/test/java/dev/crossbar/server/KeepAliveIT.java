package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * HTTP keep-alive on the reserved paths, over real sockets: many requests per connection,
 * pipelined ones answered in order, {@code Connection: close} and HTTP/1.0 honoured, an idle
 * connection closed after {@code --http-idle-timeout}, and a WebSocket upgrade after plain requests
 * on the same connection.
 */
class KeepAliveIT {

    private static final Duration IDLE = Duration.ofMillis(700);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.httpIdleTimeout(IDLE));

    private static String get(String path, String... headers) {
        StringBuilder r = new StringBuilder("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        for (String h : headers) {
            r.append(h).append("\r\n");
        }
        return r.append("\r\n").toString();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static String connectionHeader(String response) {
        for (String line : response.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("connection:")) {
                return line.substring("connection:".length()).trim().toLowerCase(Locale.ROOT);
            }
            if (line.isEmpty()) {
                break;
            }
        }
        return null;
    }

    @Test
    void severalRequestsOnOneConnection() throws Exception {
        try (RawClient c = new RawClient(relay.port())) {
            for (int i = 0; i < 5; i++) {
                c.send(bytes(get("/healthz")));
                String r = c.readResponse();
                assertTrue(r.startsWith("HTTP/1.1 200"), r);
                assertEquals("ok\n", HttpExchange.body(r));
                assertEquals(null, connectionHeader(r), r);
            }
            c.send(bytes(get("/metrics")));
            String metrics = c.readResponse();
            assertTrue(metrics.startsWith("HTTP/1.1 200"), metrics);
            assertTrue(HttpExchange.body(metrics).contains("crossbar_"), metrics);
            c.send(bytes(get("/stats")));
            String page = c.readResponse();
            assertTrue(page.startsWith("HTTP/1.1 200"), page);
            assertFalse(c.closedByPeer(200), "still open after five /healthz, /metrics and /stats");
        }
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        // /metrics is answered from the admin thread, /healthz on the event loop: without ordering,
        // the health answers would overtake the scrape.
        String[] paths = {"/metrics", "/healthz", "/stats", "/metrics", "/healthz"};
        StringBuilder all = new StringBuilder();
        for (String p : paths) {
            all.append(get(p));
        }
        try (RawClient c = new RawClient(relay.port())) {
            c.send(bytes(all.toString()));
            for (String p : paths) {
                String r = c.readResponse();
                assertTrue(r.startsWith("HTTP/1.1 200"), p + ": " + r);
                String body = HttpExchange.body(r);
                switch (p) {
                    case "/healthz" -> assertEquals("ok\n", body, p);
                    case "/metrics" -> assertTrue(body.contains("crossbar_"), p + ": " + r);
                    default -> assertTrue(body.contains("<html") || body.contains("<!DOCTYPE"), p + ": " + r);
                }
            }
        }
    }

    @Test
    void manyPipelinedRequestsAllGetAnswers() throws Exception {
        // More than HttpKeepAlive.MAX_WAITING at once: the relay stops reading, then resumes.
        int n = 200;
        try (RawClient c = new RawClient(relay.port())) {
            c.send(bytes(get("/healthz").repeat(n)));
            for (int i = 0; i < n; i++) {
                String r = c.readResponse();
                assertTrue(r.startsWith("HTTP/1.1 200"), i + ": " + r);
            }
        }
    }

    @Test
    void connectionCloseIsHonoured() throws Exception {
        try (RawClient c = new RawClient(relay.port())) {
            c.send(bytes(get("/healthz", "Connection: close")));
            String r = c.readResponse();
            assertTrue(r.startsWith("HTTP/1.1 200"), r);
            assertEquals("close", connectionHeader(r), r);
            assertTrue(c.closedByPeer(5000), "closed after the response");
        }
    }

    @Test
    void requestsAfterConnectionCloseAreNotAnswered() throws Exception {
        try (RawClient c = new RawClient(relay.port())) {
            c.send(bytes(get("/healthz", "Connection: close") + get("/healthz")));
            assertTrue(c.readResponse().startsWith("HTTP/1.1 200"));
            assertEquals("", c.readResponse(), "nothing after the response that closed");
        }
    }

    @Test
    void http10ClosesUnlessItAsksForKeepAlive() throws Exception {
        try (RawClient c = new RawClient(relay.port())) {
            c.send(bytes("GET /healthz HTTP/1.0\r\n\r\n"));
            String r = c.readResponse();
            assertTrue(r.contains(" 200 "), r);
            assertTrue(c.closedByPeer(5000), "HTTP/1.0 without keep-alive: closed");
        }
        try (RawClient c = new RawClient(relay.port())) {
            for (int i = 0; i < 3; i++) {
                c.send(bytes("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
                String r = c.readResponse();
                assertTrue(r.contains(" 200 "), r);
                assertEquals("keep-alive", connectionHeader(r), "an HTTP/1.0 client must be told: " + r);
            }
        }
    }

    @Test
    void errorsClose() throws Exception {
        try (RawClient c = new RawClient(relay.port())) {
            c.send(bytes(get("/lab/cam")));
            String r = c.readResponse();
            assertTrue(r.startsWith("HTTP/1.1 426"), r);
            assertEquals("close", connectionHeader(r), r);
            assertTrue(c.closedByPeer(5000), "closed after an error");
        }
    }

    @Test
    void anIdleConnectionIsClosedAfterTheIdleTimeout() throws Exception {
        try (RawClient c = new RawClient(relay.port())) {
            c.send(bytes(get("/healthz")));
            assertTrue(c.readResponse().startsWith("HTTP/1.1 200"));
            long start = System.nanoTime();
            assertTrue(c.closedByPeer(10_000), "idle keep-alive connection closed");
            long waitedMillis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(waitedMillis >= IDLE.toMillis() / 2, "closed after " + waitedMillis + " ms: too early");
        }
        assertEquals(0, relay.server().handshakeFailures().count(
                dev.crossbar.server.http.HandshakeFailures.Reason.TIMEOUT), "an idle close is not a failed handshake");
    }

    @Test
    void aBusyConnectionOutlivesTheHandshakeTimeout() throws Exception {
        // Requests every 100 ms for longer than the idle timeout: each response restarts the timer.
        try (RawClient c = new RawClient(relay.port())) {
            long end = System.nanoTime() + IDLE.toNanos() * 3;
            while (System.nanoTime() < end) {
                c.send(bytes(get("/healthz")));
                assertTrue(c.readResponse().startsWith("HTTP/1.1 200"));
                Thread.sleep(100);
            }
        }
    }

    @Test
    void webSocketUpgradeAfterKeepAliveRequestsWorks() throws Exception {
        try (RawClient c = new RawClient(relay.port())) {
            c.send(bytes(get("/healthz")));
            assertTrue(c.readResponse().startsWith("HTTP/1.1 200"));
            c.send(bytes(get("/metrics")));
            assertTrue(c.readResponse().startsWith("HTTP/1.1 200"));
            String head = c.upgrade("/lab/keepalive");
            assertTrue(head.startsWith("HTTP/1.1 101"), head);
            try (JdkClient other = JdkClient.connect(relay.ws("/lab/keepalive"))) {
                await("both members joined", Duration.ofSeconds(5), () -> relay.server().topics().topics().stream()
                        .mapToInt(t -> t.members().length).sum() == 2);
                other.sendText("after keep-alive");
                RawClient.Frame f = c.readFrame(5000);
                assertNotNull(f, "a relayed message on the upgraded connection");
                assertEquals("after keep-alive", new String(f.payload(), StandardCharsets.UTF_8));
            }
            // Outlives the HTTP idle timeout: the session's own keepalive rules now.
            Thread.sleep(IDLE.toMillis() * 2);
            assertFalse(c.closedByPeer(100), "the WebSocket outlives the HTTP idle timeout");
        }
    }
}
