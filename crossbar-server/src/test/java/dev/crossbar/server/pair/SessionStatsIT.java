package dev.crossbar.server.pair;

import static dev.crossbar.server.testing.StatsReader.nextWhere;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.SessionHost;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * 1:1 sessions in the statistics: per session stream its hosts, the sessions waiting, and each open
 * session's age and the messages and bytes each way; never what was said nor the session's path.
 */
class SessionStatsIT {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .statsInterval(Duration.ofMillis(200))
            .routing(new RoutingTable(RoutingTable.parseAll(List.of("/shell/*:schema=session")))));

    @Test
    void openSessionsShowTheirAgeAndTrafficButNotTheirContent() throws Exception {
        try (SessionHost host = new SessionHost(relay.ws("/in/shell/exp1"), URI.create("ws://127.0.0.1:" + relay.port()));
             JdkClient stats = JdkClient.connect(relay.ws("/ws"))) {
            RelayServerExtension.await("host registered", WAIT, () -> relay.server().pairs().hosts() == 1);
            JsonNode idle = nextWhere(stats, WAIT, s -> s.has("sessions"));
            JsonNode stream = idle.get("sessions").get(0);
            assertEquals("/shell/exp1", stream.get("stream").asText());
            assertEquals(1, stream.get("hosts").asInt());
            assertEquals(0, stream.get("open").size());

            try (JdkClient client = JdkClient.connect(relay.ws("/out/shell/exp1"))) {
                client.sendText("secret-command");
                assertEquals("secret-command", client.take(WAIT).string(), "the host echoes");
                client.sendBinary(new byte[1000]);
                assertEquals(1000, client.take(WAIT).data().length);
                JsonNode s = nextWhere(stats, WAIT, snap -> snap.has("sessions")
                        && snap.get("sessions").get(0).get("open").size() == 1
                        && snap.get("sessions").get(0).get("open").get(0).get("messagesToClient").asLong() == 2);
                JsonNode open = s.get("sessions").get(0).get("open").get(0);
                assertEquals(2, open.get("messagesToHost").asLong());
                assertEquals(1014, open.get("bytesToHost").asLong());
                assertEquals(1014, open.get("bytesToClient").asLong());
                assertTrue(open.get("ageSeconds").asDouble() >= 0, open.toString());
                String text = s.toString();
                assertFalse(text.contains("secret-command"), "no content in the statistics");
                String path = host.offers.peek().get("session").asText();
                assertFalse(text.contains(path.substring(path.lastIndexOf('/') + 1)), "no session path");
            }
            nextWhere(stats, WAIT, snap -> snap.get("sessions").get(0).get("open").size() == 0);
        }
    }
}
