package dev.crossbar.server.stream;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.http.HandshakeFailures.Reason;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.IngestPoster;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.PrometheusText;
import dev.crossbar.server.testing.RelayServerExtension;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * HTTP ingest meets the relay's limits as a WebSocket publisher does: the topic limit (503), the
 * connections per address (429), and the idle timeout (a poster that stops sending is answered 408),
 * each with a reason and counted among the refused handshakes.
 */
class HttpIngestLimitsIT {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .maxTopics(1)
            .maxConnectionsPerAddress(3)
            .pingInterval(Duration.ofMillis(200))
            .idleTimeout(Duration.ofMillis(600)));

    /** The refusals counted for {@code reason}, once {@code /metrics} answers (the refused sockets are released). */
    private double failures(Reason reason) {
        String[] metrics = new String[1];
        await("/metrics answers", WAIT, () -> {
            try {
                String r = HttpExchange.exchange(relay.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                metrics[0] = HttpExchange.body(r);
                return IngestPoster.status(r) == 200;
            } catch (java.io.IOException e) {
                return false;
            }
        });
        return PrometheusText.parse(metrics[0]).value("crossbar_handshake_failures_total", "reason", reason.label());
    }

    @Test
    void aNewStreamBeyondTheTopicLimitIs503() throws Exception {
        try (JdkClient sub = JdkClient.connect(relay.ws("/out/a"))) {
            await("one topic", WAIT, () -> relay.server().topics().size() == 1);
            try (IngestPoster poster = IngestPoster.post(relay.port(), "/in/b")) {
                String r = poster.response();
                assertEquals(503, IngestPoster.status(r), r);
                assertTrue(HttpExchange.body(r).contains("topic limit reached (1 live topics)"), r);
            }
            assertEquals(1, failures(Reason.TOPIC_LIMIT), 0);
        }
    }

    /** A connection the relay has counted: it answered a request on it, and keeps it open (keep-alive). */
    private Socket admitted() throws java.io.IOException {
        Socket s = new Socket("127.0.0.1", relay.port());
        s.setSoTimeout(10_000);
        s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        String r = HttpExchange.readResponse(s.getInputStream());
        assertEquals(200, IngestPoster.status(r), r);
        return s;
    }

    @Test
    void aPosterOverTheConnectionsPerAddressIs429() throws Exception {
        try (Socket a = admitted();
             Socket b = admitted();
             Socket c = admitted();
             IngestPoster poster = IngestPoster.post(relay.port(), "/in/a")) {
            String r = poster.response();
            assertEquals(429, IngestPoster.status(r), r);
            assertTrue(HttpExchange.body(r).contains("too many connections from your address"), r);
        }
        assertEquals(1, failures(Reason.TOO_MANY_FROM_ADDRESS), 0);
    }

    @Test
    void aPosterThatFallsSilentIsAnswered408() throws Exception {
        try (IngestPoster poster = IngestPoster.post(relay.port(), "/in/a")) {
            byte[] piece = "{\"t\":1}\n".getBytes(StandardCharsets.US_ASCII);
            poster.write(piece, 0, piece.length);
            String r = poster.response(); // nothing more is sent
            assertEquals(408, IngestPoster.status(r), r);
            assertTrue(HttpExchange.body(r).contains("the stream ends here"), r);
            await("left the topic", WAIT, () -> relay.server().topics().size() == 0);
        }
    }
}
