package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static dev.crossbar.server.testing.StatsReader.clientByAgent;
import static dev.crossbar.server.testing.StatsReader.clients;
import static dev.crossbar.server.testing.StatsReader.next;
import static dev.crossbar.server.testing.StatsReader.nextWhere;
import static dev.crossbar.server.testing.StatsReader.topic;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RelayServerExtension;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The JSON stats socket against a live relay with known traffic: exact counts, plausible rates, churn. */
class StatsSocketIT {

    private static final Duration INTERVAL = Duration.ofMillis(300);
    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.statsInterval(INTERVAL)
            .statsFullClientDetails(true)); // client strings whole: PrivacyTest covers the default

    private void awaitMembers(int n) {
        await(n + " members joined", WAIT, () -> relay.server().topics().topics().stream()
                .mapToInt(t -> t.members().length).sum() == n);
    }

    private static void drain(JdkClient c, int messages) {
        for (int i = 0; i < messages; i++) {
            c.take();
        }
    }

    @Test
    void snapshotOnConnectCountsExactMessagesAndBytes() throws Exception {
        try (JdkClient pub = JdkClient.connectAs(relay.ws("/in/cam"), "pub-agent");
             JdkClient sub1 = JdkClient.connectAs(relay.ws("/out/cam"), "sub-agent-1");
             JdkClient sub2 = JdkClient.connectAs(relay.ws("/out/cam"), "sub-agent-2");
             JdkClient chat = JdkClient.connectAs(relay.ws("/lab/chat"), "chat-agent")) {
            awaitMembers(4);
            for (int i = 0; i < 50; i++) {
                pub.sendBinary(new byte[1000]);
            }
            for (int i = 0; i < 10; i++) {
                pub.sendText("hello");
            }
            sub1.sendText("not allowed");
            sub1.sendText("nor this");
            drain(sub1, 60);
            drain(sub2, 60);

            try (JdkClient stats = JdkClient.connect(relay.ws("/ws"))) {
                JsonNode s = next(stats, WAIT);
                long payload = 50 * 1000 + 10 * 5;

                JsonNode p = clientByAgent(s, "pub-agent");
                assertEquals("/out/cam", p.get("topic").asText(), "the original's topic name for both ends");
                assertTrue(p.get("broadcaster").asBoolean());
                assertTrue(p.get("remoteAddr").asText().startsWith("127.0.0.1:"), p.toString());
                assertTrue(p.get("connected").asText().matches("\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d(\\.\\d+)? \\+0000 UTC"),
                        p.get("connected").asText());
                assertEquals("/in/cam", p.get("path").asText());
                assertEquals("1:n", p.get("schema").asText());
                assertEquals("publisher", p.get("role").asText());
                assertEquals(60, p.get("in").get("messages").asLong());
                assertEquals(payload, p.get("in").get("bytes").asLong());
                assertEquals(Math.round(payload / 60.0), p.get("in").get("meanSize").asLong());
                assertEquals(0, p.get("out").get("messages").asLong());
                assertTrue(p.get("out").get("lastSeconds").isNull(), "never sent to: " + p);
                // The original's block: tx is client to relay.
                assertEquals(Math.round(payload / 60.0), p.get("stats").get("tx").get("size").asLong());
                assertTrue(p.get("stats").get("tx").get("last").asText().matches("[0-9.]+(ns|µs|ms|s)|.*m.*s"),
                        p.get("stats").toString());
                assertEquals("Never", p.get("stats").get("rx").get("last").asText());

                for (String agent : List.of("sub-agent-1", "sub-agent-2")) {
                    JsonNode sub = clientByAgent(s, agent);
                    assertFalse(sub.get("broadcaster").asBoolean());
                    assertEquals("subscriber", sub.get("role").asText());
                    assertEquals(60, sub.get("out").get("messages").asLong(), agent);
                    assertEquals(payload, sub.get("out").get("bytes").asLong(), agent);
                    assertEquals(Math.round(payload / 60.0), sub.get("stats").get("rx").get("size").asLong());
                    assertEquals(0, sub.get("dropped").asLong());
                }
                assertEquals(2, clientByAgent(s, "sub-agent-1").get("refused").asLong());
                assertEquals(0, clientByAgent(s, "sub-agent-2").get("refused").asLong());

                JsonNode t = topic(s, "/out/cam");
                assertEquals("cam", t.get("name").asText());
                assertEquals(1, t.get("members").get("publisher").asInt());
                assertEquals(2, t.get("members").get("subscriber").asInt());
                assertEquals(62, t.get("in").get("messages").asLong(), "60 published + 2 refused");
                assertEquals(120, t.get("out").get("messages").asLong());
                assertEquals(2 * payload, t.get("out").get("bytes").asLong());
                assertEquals(2, t.get("refused").asLong());

                JsonNode chatTopic = topic(s, "/lab/chat");
                assertEquals("n:n", chatTopic.get("schema").asText());
                assertEquals(1, chatTopic.get("members").get("member").asInt());
                assertEquals("member", clientByAgent(s, "chat-agent").get("role").asText());

                assertEquals(4, s.get("totals").get("connections").asInt());
                assertEquals(2, s.get("totals").get("topics").asInt());
                assertEquals(1, s.get("totals").get("statsSockets").asInt());
                assertEquals(0.3, s.get("intervalSeconds").asDouble(), 1e-9);
                assertEquals(4, s.get("clients").size(), "stats sockets are not listed as clients");
            }
        }
    }

    @Test
    void ratesArePlausibleWhileStreaming() throws Exception {
        try (JdkClient pub = JdkClient.connectAs(relay.ws("/in/steady"), "steady-pub");
             JdkClient sub = JdkClient.connectAs(relay.ws("/out/steady"), "steady-sub");
             JdkClient stats = JdkClient.connect(relay.ws("/ws"))) {
            awaitMembers(2);
            next(stats, WAIT);
            // 50 messages/s of 400 bytes for 2.5 s, paced by the clock, not by sleeps adding up.
            int perSecond = 50;
            Instant streamStart = Instant.now();
            long start = System.nanoTime();
            int sent = 0;
            while (System.nanoTime() - start < Duration.ofMillis(2500).toNanos()) {
                long due = start + sent * 1_000_000_000L / perSecond;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
                pub.sendBinary(new byte[400]);
                sent++;
            }
            Instant streamEnd = Instant.now();
            drain(sub, sent);
            // The last snapshot pushed while the stream ran, its whole rate window inside the stream
            // (windows are at most about two intervals long).
            Instant windowFits = streamStart.plusMillis(1200);
            JsonNode s = null;
            while (true) {
                JsonNode snap = next(stats, WAIT);
                Instant at = Instant.parse(snap.get("time").asText());
                if (at.isAfter(streamEnd)) {
                    break;
                }
                if (at.isAfter(windowFits)) {
                    s = snap;
                }
            }
            assertTrue(s != null, "no snapshot pushed while streaming");
            // On a busy 2-core machine sends bunch up, hence the wide band: this catches unit and
            // window bugs (x1000, per interval instead of per second, lifetime averages), not jitter.
            JsonNode p = clientByAgent(s, "steady-pub");
            double inRate = p.get("in").get("rate").asDouble();
            double outRate = clientByAgent(s, "steady-sub").get("out").get("rate").asDouble();
            assertTrue(inRate > perSecond * 0.4 && inRate < perSecond * 1.6, "publisher in rate " + inRate);
            assertTrue(outRate > perSecond * 0.4 && outRate < perSecond * 1.6, "subscriber out rate " + outRate);
            assertEquals(inRate, p.get("stats").get("tx").get("fps").asDouble(), 1e-9, "fps is the same rate");
            double byteRate = p.get("in").get("byteRate").asDouble();
            assertEquals(inRate * 400, byteRate, inRate * 400 * 0.01 + 1, "byte rate = rate x size");
            assertEquals(400, p.get("in").get("meanSize").asLong());
            JsonNode t = topic(s, "/out/steady");
            assertTrue(t.get("in").get("rate").asDouble() > perSecond * 0.4, t.toString());

            // Once the stream stops, the next full window reads zero.
            JsonNode quiet = nextWhere(stats, WAIT,
                    snap -> clientByAgent(snap, "steady-pub").get("in").get("rate").asDouble() == 0.0);
            assertEquals(sent, clientByAgent(quiet, "steady-pub").get("in").get("messages").asLong());
            assertTrue(clientByAgent(quiet, "steady-pub").get("in").get("lastSeconds").asDouble() > 0);
        }
    }

    @Test
    void departedClientIsGoneFromTheNextSnapshot() throws Exception {
        try (JdkClient stay = JdkClient.connectAs(relay.ws("/lab/room"), "stays");
             JdkClient stats = JdkClient.connect(relay.ws("/ws"))) {
            JdkClient leaver = JdkClient.connectAs(relay.ws("/lab/room"), "leaves");
            awaitMembers(2);
            nextWhere(stats, WAIT, s -> clients(s, c -> c.get("userAgent").asText().equals("leaves")).size() == 1);

            leaver.close();
            awaitMembers(1);
            Instant gone = Instant.now();
            // The first snapshot taken after the relay removed the client must not list it.
            JsonNode after = nextWhere(stats, WAIT, s -> Instant.parse(s.get("time").asText()).isAfter(gone));
            assertTrue(clients(after, c -> c.get("userAgent").asText().equals("leaves")).isEmpty(), after.toString());
            assertEquals(1, clients(after, c -> c.get("userAgent").asText().equals("stays")).size());
            assertEquals(1, topic(after, "/lab/room").get("members").get("member").asInt());

            stay.close();
            awaitMembers(0);
            Instant empty = Instant.now();
            JsonNode none = nextWhere(stats, WAIT, s -> Instant.parse(s.get("time").asText()).isAfter(empty));
            assertEquals(0, none.get("clients").size());
            assertEquals(0, none.get("topics").size(), "a topic goes with its last member");
        }
    }

    @Test
    void clientStringsAreCarriedRawForTheReaderToEscape() throws Exception {
        String agent = "<script>alert('ua')</script>";
        String topicName = "/lab/<img src=x onerror=alert(1)>";
        URI uri = URI.create("ws://127.0.0.1:" + relay.port() + "/lab/%3Cimg%20src=x%20onerror=alert(1)%3E");
        try (JdkClient evil = JdkClient.connectAs(uri, agent);
             JdkClient stats = JdkClient.connect(relay.ws("/ws"))) {
            awaitMembers(1);
            JsonNode s = nextWhere(stats, WAIT, snap -> snap.get("clients").size() == 1);
            JsonNode c = clientByAgent(s, agent);
            assertEquals(topicName, c.get("topic").asText());
            assertEquals(topicName, c.get("path").asText());
            assertEquals(topicName, topic(s, topicName).get("name").asText());
        }
    }

    @Test
    void slowStatsReaderDoesNotStopTheRelay() throws Exception {
        // A stats socket that never reads must not hold up relaying; it just misses snapshots.
        try (var raw = new java.net.Socket("127.0.0.1", relay.port());
             JdkClient pub = JdkClient.connect(relay.ws("/in/x"));
             JdkClient sub = JdkClient.connect(relay.ws("/out/x"))) {
            raw.getOutputStream().write(("GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            await("stats socket open", WAIT, () -> relay.server().stats().sockets() == 1);
            awaitMembers(2);
            for (int i = 0; i < 20; i++) {
                pub.sendText("m" + i);
                assertEquals("m" + i, sub.take().string());
            }
        }
    }
}
