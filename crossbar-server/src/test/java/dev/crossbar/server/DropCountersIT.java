package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.core.relay.Member;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.server.session.RelaySession;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.PrometheusText;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.StatsReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Real drops show up where operators look (docs/operations.md, statistics and metrics): a
 * subscriber that stops reading loses messages, and the relay's own count of them is what
 * {@code /metrics} and the {@code /ws} snapshot report, per client, per topic and in total, also
 * after the client has gone.
 */
class DropCountersIT {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int QUEUE = 64 * 1024;
    private static final int FRAME = 4_600;
    private static final int MIN_DROPS = 20;

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.maxClientQueueBytes(QUEUE)
            .statsFullClientDetails(true)); // finds a client by its whole address

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private double scrapeDropped() throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(relay.http("/metrics")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        return PrometheusText.parse(r.body()).value("crossbar_messages_dropped_total", "schema", "1:n", "role", "subscriber");
    }

    /** Waits until {@code /metrics} reports {@code expected} drops (its counters are read on a short cycle). */
    private void awaitMetric(long expected) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        double seen;
        while ((seen = scrapeDropped()) != expected) {
            assertTrue(System.nanoTime() < deadline, "/metrics reports " + seen + " drops, the relay counted " + expected);
            Thread.sleep(100);
        }
    }

    @Test
    void dropsOfAStalledSubscriberAppearInMetricsAndStats() throws Exception {
        long dropped;
        try (NettyClient pub = NettyClient.connect(relay.ws("/in/drops"));
             RawClient stalled = new RawClient(relay.port(), 4096)) {
            assertTrue(stalled.upgrade("/out/drops").startsWith("HTTP/1.1 101"));
            await("both joined", WAIT, () -> relay.server().connections() == 2);
            Topic topic = relay.server().topics().topics().iterator().next();
            RelaySession session = null;
            for (Member m : topic.members()) {
                RelaySession s = (RelaySession) m;
                if (s.channel().remoteAddress().toString().endsWith(":" + stalled.socket.getLocalPort())) {
                    session = s;
                }
            }
            assertTrue(session != null, "found the stalled session");
            RelaySession watched = session;

            // The stalled client never reads: publish until the relay has dropped enough for it.
            long deadline = System.nanoTime() + WAIT.toNanos();
            int sent = 0;
            while (watched.stats().dropped() < MIN_DROPS) {
                assertTrue(System.nanoTime() < deadline, "no drops after " + sent + " messages");
                pub.sendBinary(new byte[FRAME]); // waits until written, so little is in flight when we stop
                sent++;
            }
            // Let what is still in flight arrive, then take the relay's own count as the truth.
            long previous;
            do {
                previous = watched.stats().dropped();
                Thread.sleep(500);
            } while (watched.stats().dropped() != previous);
            dropped = previous;
            long counted = dropped;
            assertTrue(dropped >= MIN_DROPS && dropped < sent, dropped + " of " + sent);

            awaitMetric(dropped);

            String addr = "127.0.0.1:" + stalled.socket.getLocalPort();
            try (JdkClient stats = JdkClient.connect(relay.ws("/ws"))) {
                JsonNode snapshot = StatsReader.nextWhere(stats, WAIT, s -> {
                    stats.sendText("-"); // ask again at once rather than wait for the interval
                    return s.path("totals").path("dropped").asLong() == counted;
                });
                assertEquals(dropped, StatsReader.topic(snapshot, "/out/drops").path("dropped").asLong(), snapshot::toString);
                JsonNode client = StatsReader.clients(snapshot, c -> c.path("remoteAddr").asText().equals(addr)).get(0);
                assertEquals(dropped, client.path("dropped").asLong(), client::toString);
                assertEquals("subscriber", client.path("role").asText());
                JsonNode publisher = StatsReader.clients(snapshot, c -> c.path("role").asText().equals("publisher")).get(0);
                assertEquals(0, publisher.path("dropped").asLong(), "the publisher lost nothing");
            }
        }
        // Departed connections stay in the totals.
        await("all gone", WAIT, () -> relay.server().connections() == 0);
        awaitMetric(dropped);
    }
}
