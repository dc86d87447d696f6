package dev.crossbar.server.stream;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RelayServerExtension;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code start=last}: a newcomer gets each publisher's last message first, then the live stream,
 * each message once; streams no rule matches start live, as before.
 */
class StartLastIT {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration QUIET = Duration.ofMillis(300);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .homeLoopMembers(0) // spread members over both loops: joins race publishes across threads
            .routing(new RoutingTable(RoutingTable.parseAll(List.of("/sensor/**:start=last")))));

    private long messagesIn(String name) {
        for (Topic t : relay.server().topics().topics()) {
            if (t.key().name().equals(name)) {
                return t.totals()[0];
            }
        }
        return -1;
    }

    @Test
    void aLateSubscriberGetsEachPublishersLastMessageFirstThenLive() {
        try (JdkClient a = JdkClient.connect(relay.ws("/in/sensor/t"));
             JdkClient b = JdkClient.connect(relay.ws("/in/sensor/t"))) {
            await("both publishers joined", WAIT, () -> relay.server().topics().size() == 1
                    && relay.server().topics().topics().iterator().next().size() == 2);
            a.sendText("{\"a\":1}");
            a.sendText("{\"a\":2}");
            b.sendBinary(new byte[] {'b', 1});
            await("3 messages in", WAIT, () -> messagesIn("sensor/t") == 3);

            try (JdkClient late = JdkClient.connect(relay.ws("/out/sensor/t"))) {
                Set<String> first = new HashSet<>();
                first.add(describe(late.take(WAIT)));
                first.add(describe(late.take(WAIT)));
                assertEquals(Set.of("text {\"a\":2}", "binary b1"), first);
                a.sendText("{\"a\":3}");
                assertEquals("text {\"a\":3}", describe(late.take(WAIT)));
                assertNull(late.poll(QUIET), "nothing twice");

                // A publisher that leaves is forgotten: the next newcomer gets only the other's.
                a.close();
                await("publisher a left", WAIT, () -> relay.server().topics().topics().iterator().next().size() == 2);
                try (JdkClient later = JdkClient.connect(relay.ws("/out/sensor/t"))) {
                    assertEquals("binary b1", describe(later.take(WAIT)));
                    assertNull(later.poll(QUIET));
                }
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void manyToManyTopicsMatchByPathAndNeverEchoTheNewcomer() throws Exception {
        try (JdkClient x = JdkClient.connect(relay.ws("/sensor/room"))) {
            await("x joined", WAIT, () -> relay.server().topics().size() == 1);
            x.sendText("x1");
            await("x1 in", WAIT, () -> messagesIn("/sensor/room") == 1);
            try (JdkClient y = JdkClient.connect(relay.ws("/sensor/room"))) {
                assertEquals("text x1", describe(y.take(WAIT)));
                y.sendText("y1");
                assertEquals("text y1", describe(x.take(WAIT)));
                assertNull(y.poll(QUIET), "y's own message is not echoed, now or as a last value");
            }
        }
    }

    @Test
    void aStreamNoRuleMatchesStartsLive() throws Exception {
        try (JdkClient pub = JdkClient.connect(relay.ws("/in/plain/t"))) {
            await("publisher joined", WAIT, () -> relay.server().topics().size() == 1);
            pub.sendText("before");
            await("1 message in", WAIT, () -> messagesIn("plain/t") == 1);
            try (JdkClient late = JdkClient.connect(relay.ws("/out/plain/t"))) {
                await("subscriber joined", WAIT, () -> relay.server().topics().topics().iterator().next().size() == 2);
                assertNull(late.poll(QUIET), "no rule: nothing from before the join");
                pub.sendText("after");
                assertEquals("text after", describe(late.take(WAIT)));
            }
        }
    }

    /**
     * Subscribers join while a publisher sends a numbered stream flat out: each gets, from its
     * first message on, every number once and in order: the replay and the live stream meet with
     * no gap and no overlap, whichever loop each side is on.
     */
    @Test
    void replayAndLiveMeetWithNoGapAndNoOverlapUnderLoad() throws Exception {
        int total = 3000;
        int subscribers = 8;
        try (JdkClient pub = JdkClient.connect(relay.ws("/in/sensor/seq"))) {
            await("publisher joined", WAIT, () -> relay.server().topics().size() == 1);
            JdkClient[] subs = new JdkClient[subscribers];
            try {
                for (int i = 0; i < total; i++) {
                    pub.sendText(Integer.toString(i));
                    if (i % (total / subscribers) == 100) {
                        subs[i / (total / subscribers)] = JdkClient.connect(relay.ws("/out/sensor/seq"));
                    }
                }
                for (JdkClient s : subs) {
                    int first = Integer.parseInt(s.take(WAIT).string());
                    for (int expected = first + 1; expected < total; expected++) {
                        assertEquals(expected, Integer.parseInt(s.take(WAIT).string()),
                                "subscriber that started at " + first);
                    }
                    assertNull(s.poll(QUIET));
                }
            } finally {
                for (JdkClient s : subs) {
                    if (s != null) {
                        s.close();
                    }
                }
            }
        }
    }

    @Test
    void theRuleAndWhatTheTopicHoldsShowInTheStatistics() throws Exception {
        try (JdkClient pub = JdkClient.connect(relay.ws("/in/sensor/s"));
             JdkClient plain = JdkClient.connect(relay.ws("/plain"))) {
            await("members joined", WAIT, () -> relay.server().topics().size() == 2);
            pub.sendText("12345");
            await("1 message in", WAIT, () -> messagesIn("sensor/s") == 1);
            try (JdkClient stats = JdkClient.connect(relay.ws("/ws"))) {
                com.fasterxml.jackson.databind.JsonNode snap = dev.crossbar.server.testing.StatsReader.next(stats, WAIT);
                com.fasterxml.jackson.databind.JsonNode sensor = null;
                com.fasterxml.jackson.databind.JsonNode other = null;
                for (com.fasterxml.jackson.databind.JsonNode t : snap.get("topics")) {
                    if (t.get("name").asText().equals("sensor/s")) {
                        sensor = t.get("stream");
                    } else {
                        other = t.get("stream");
                    }
                }
                assertEquals("/sensor/**:start=last", sensor.get("rule").asText());
                assertEquals("--route #1", sensor.get("source").asText());
                assertEquals("last", sensor.get("start").asText());
                assertEquals(1, sensor.get("held").get("messages").asInt());
                assertEquals(5, sensor.get("held").get("bytes").asInt());
                assertEquals("live", other.get("start").asText());
                assertEquals(true, other.get("rule").isNull());
            }
        }
    }

    private static String describe(dev.crossbar.server.testing.Received r) {
        if (r.text()) {
            return "text " + r.string();
        }
        StringBuilder b = new StringBuilder("binary ");
        for (byte x : r.data()) {
            b.append(x >= 32 ? Character.toString((char) x) : Integer.toString(x));
        }
        return b.toString();
    }
}
