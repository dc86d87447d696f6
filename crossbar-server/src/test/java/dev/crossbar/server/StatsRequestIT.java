package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static dev.crossbar.server.testing.StatsReader.next;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RelayServerExtension;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Snapshots on demand, and the original crossbar's request/response protocol. The interval is a
 * minute, so every message seen here was asked for, not pushed by the timer.
 */
class StatsRequestIT {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration QUIET = Duration.ofMillis(500);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.statsInterval(Duration.ofMinutes(1))
            .statsFullClientDetails(true)); // client strings whole: PrivacyTest covers the default

    @Test
    void anyTextMessageAsksForASnapshotNow() throws Exception {
        try (JdkClient stats = JdkClient.connect(relay.ws("/ws"))) {
            JsonNode first = next(stats, WAIT);
            assertEquals(0, first.get("clients").size());
            assertNull(stats.poll(QUIET), "nothing until asked: the interval is a minute");

            try (JdkClient a = JdkClient.connectAs(relay.ws("/lab/q"), "asked-for")) {
                await("member joined", WAIT, () -> relay.server().topics().size() == 1);
                stats.sendText("-");
                JsonNode asked = next(stats, WAIT);
                assertEquals(1, asked.get("clients").size());
                assertEquals("asked-for", asked.get("clients").get(0).get("userAgent").asText());
            }
        }
    }

    @Test
    void clientsFormatAnswersEachRequestWithOneMessagePerClientLikeTheOriginal() throws Exception {
        try (JdkClient stats = JdkClient.connect(relay.ws("/ws?format=clients"))) {
            assertNull(stats.poll(QUIET), "the original sends nothing until asked");
            stats.sendText("\"-\"");
            assertNull(stats.poll(QUIET), "and nothing at all when there are no clients");

            try (JdkClient pub = JdkClient.connectAs(relay.ws("/in/video"), "legacy-pub");
                 JdkClient sub = JdkClient.connectAs(relay.ws("/out/video"), "legacy-sub");
                 JdkClient chat = JdkClient.connectAs(relay.ws("/chat"), "legacy-chat")) {
                await("3 members", WAIT, () -> relay.server().topics().topics().stream()
                        .mapToInt(t -> t.members().length).sum() == 3);
                stats.sendText("-");
                Set<String> agents = new HashSet<>();
                for (int i = 0; i < 3; i++) {
                    JsonNode c = next(stats, WAIT);
                    agents.add(c.get("userAgent").asText());
                    // The original's fields, each with its original type.
                    assertTrue(c.get("topic").isTextual() && c.get("broadcaster").isBoolean()
                            && c.get("connected").isTextual() && c.get("remoteAddr").isTextual(), c.toString());
                    for (String dir : new String[] {"tx", "rx"}) {
                        JsonNode d = c.get("stats").get(dir);
                        assertTrue(d.get("last").isTextual() && d.get("size").isIntegralNumber()
                                && d.get("fps").isNumber(), c.toString());
                    }
                }
                assertEquals(Set.of("legacy-pub", "legacy-sub", "legacy-chat"), agents);
                assertNull(stats.poll(QUIET), "one message per client, no more");
            }
        }
    }

    @Test
    void longUserAgentsAreCutForStatistics() throws Exception {
        String agent = "a".repeat(1000);
        try (JdkClient c = JdkClient.connectAs(relay.ws("/lab/long"), agent);
             JdkClient stats = JdkClient.connect(relay.ws("/ws"))) {
            await("member joined", WAIT, () -> relay.server().topics().size() == 1);
            stats.sendText("-");
            JsonNode s = next(stats, WAIT);
            if (s.get("clients").size() == 0) {
                s = next(stats, WAIT);
            }
            assertEquals("a".repeat(dev.crossbar.server.http.UpgradeGate.MAX_USER_AGENT_CHARS),
                    s.get("clients").get(0).get("userAgent").asText());
        }
    }

    @Test
    void unknownFormatIsRefusedWithTheChoices() throws Exception {
        String raw = RawHttp.request(relay.port(), RawHttp.upgrade("/ws?format=xml"));
        assertTrue(raw.startsWith("HTTP/1.1 400"), raw);
        assertTrue(raw.contains("format: 'xml' (expected: snapshot or clients)"), raw);
    }
}
