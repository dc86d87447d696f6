package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static dev.crossbar.server.testing.StatsReader.clientByAgent;
import static dev.crossbar.server.testing.StatsReader.next;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.PrometheusText;
import dev.crossbar.server.testing.RelayServerExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code --admin-listen}: statistics and metrics on their own address, and only there. */
class AdminListenIT {

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.adminListen("127.0.0.1:0"));

    private final HttpClient http = HttpClient.newHttpClient();

    private URI admin(String scheme, String path) {
        return URI.create(scheme + "://127.0.0.1:" + relay.server().adminAddress().getPort() + path);
    }

    private int status(URI uri) throws Exception {
        return http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Test
    void mainAddressServesTopicsAndHealthButNotStatistics() throws Exception {
        assertEquals(200, status(relay.http("/healthz")));
        assertEquals(404, status(relay.http("/stats")));
        assertEquals(404, status(relay.http("/metrics")));
        String ws = RawHttp.request(relay.port(), RawHttp.upgrade("/ws"));
        assertTrue(ws.startsWith("HTTP/1.1 404"), ws);
        assertEquals(0, relay.server().topics().size(), "still reserved: not a topic");
    }

    @Test
    void adminAddressServesStatisticsOfTheMainAddressAndNoTopics() throws Exception {
        for (String path : List.of("/healthz", "/stats", "/metrics")) {
            assertEquals(200, status(admin("http", path)), path);
        }
        String topic = RawHttp.request(relay.server().adminAddress().getPort(), RawHttp.upgrade("/lab/cam"));
        assertTrue(topic.startsWith("HTTP/1.1 404"), topic);
        try (JdkClient pub = JdkClient.connectAs(relay.ws("/in/cam"), "main-pub");
             JdkClient stats = JdkClient.connect(admin("ws", "/ws"))) {
            await("joined", Duration.ofSeconds(5), () -> relay.server().topics().size() == 1);
            stats.sendText("-");
            var s = next(stats, Duration.ofSeconds(5));
            if (s.get("clients").size() == 0) {
                s = next(stats, Duration.ofSeconds(5));
            }
            assertEquals("publisher", clientByAgent(s, "main-pub").get("role").asText());
        }
        String body = http.send(HttpRequest.newBuilder(admin("http", "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertEquals(1, PrometheusText.parse(body).value("crossbar_handshake_failures_total", "reason", "not_found"));
    }
}
