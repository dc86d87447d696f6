package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.route.SendLimits;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.IngestPoster;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.PrometheusText;
import dev.crossbar.server.testing.RelayServerExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Per-sender limits as stream-rule keys and relay-wide defaults: over the rate or the bandwidth a
 * message is dropped and counted, or the sender closed with 1008 (an HTTP poster answered 429), as
 * its rule chooses; nobody else on the topic notices.
 */
class SendLimitsIT {

    /** A relay-wide bandwidth of 80 kbit/s (10,000 bytes a second) for every stream without a rule of its own. */
    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .defaultSendLimits(new SendLimits(null, null, 80_000L, null))
            .routing(new RoutingTable(RoutingTable.parseAll(List.of(
                    "/chat/**:rate=20/s,burst=5",
                    "/ctl/**:rate=5/s,burst=2,over-limit=close",
                    "/cam/**:bandwidth=off")))));

    private double overLimit(String action) {
        return PrometheusText.parse(relay.server().metrics().scrape())
                .value("crossbar_messages_over_limit_total", "action", action);
    }

    /** Sends {@code n} messages as fast as the client can, and returns how many {@code receiver} got. */
    private int burst(JdkClient sender, JdkClient receiver, int n, int size) throws InterruptedException {
        double droppedBefore = overLimit("dropped");
        byte[] payload = new byte[size];
        for (int i = 0; i < n; i++) {
            sender.sendBinary(payload);
        }
        // Every message is either relayed or counted as dropped: wait until all are accounted for.
        int[] got = {0};
        await("all " + n + " messages relayed or dropped", Duration.ofSeconds(10), () -> {
            while (receiver.pending() > 0) {
                receiver.take(Duration.ofSeconds(1));
                got[0]++;
            }
            return got[0] + (overLimit("dropped") - droppedBefore) == n;
        });
        return got[0];
    }

    @Test
    void overTheRateMessagesAreDroppedAndCounted() throws Exception {
        try (JdkClient flood = JdkClient.connect(relay.ws("/chat/room"));
             JdkClient calm = JdkClient.connect(relay.ws("/chat/room"));
             JdkClient reader = JdkClient.connect(relay.ws("/chat/room"))) {
            await("joined", Duration.ofSeconds(5), () -> relay.server().connections() == 3);
            int got = burst(flood, reader, 60, 10);
            // A burst of five, then twenty a second: far fewer than sixty in the time the loop takes.
            assertTrue(got >= 5 && got < 60, "relayed " + got + " of 60");
            while (calm.pending() > 0) {
                calm.take(Duration.ofSeconds(1)); // the flood's messages it did get
            }
            // Another sender on the same topic has its own bucket.
            calm.sendText("still here");
            assertEquals("still here", reader.take(Duration.ofSeconds(5)).string());
        }
    }

    @Test
    void overTheRateTheRuleCanCloseTheSenderWith1008() throws Exception {
        try (JdkClient script = JdkClient.connect(relay.ws("/ctl/arm"));
             JdkClient reader = JdkClient.connect(relay.ws("/ctl/arm"))) {
            await("joined", Duration.ofSeconds(5), () -> relay.server().connections() == 2);
            for (int i = 0; i < 10; i++) {
                try {
                    script.sendText("move " + i);
                } catch (RuntimeException closedMeanwhile) {
                    break;
                }
            }
            assertEquals(1008, script.awaitClose(Duration.ofSeconds(10)));
            assertEquals("over the send limit (rate=5/s,burst=2,bandwidth=80kbit,over-limit=close)",
                    script.closeReason.join());
            await("counted", Duration.ofSeconds(5), () -> overLimit("closed") == 1);
        }
    }

    @Test
    void theDefaultBandwidthAppliesWhereNoRuleSetsOneAndARuleCanLiftIt() throws Exception {
        try (JdkClient pub = JdkClient.connect(relay.ws("/in/data"));
             JdkClient sub = JdkClient.connect(relay.ws("/out/data"));
             JdkClient cam = JdkClient.connect(relay.ws("/in/cam/1"));
             JdkClient viewer = JdkClient.connect(relay.ws("/out/cam/1"))) {
            await("joined", Duration.ofSeconds(5), () -> relay.server().connections() == 4);
            // 10,000 bytes a second, in debt by at most one message: three of 4,000 bytes pass at once.
            int got = burst(pub, sub, 20, 4000);
            assertTrue(got >= 3 && got < 20, "relayed " + got + " of 20");
            // bandwidth=off on /cam/**: everything passes.
            assertEquals(20, burst(cam, viewer, 20, 4000));
        }
    }

    @Test
    void anHttpPosterHasTheStreamsLimitsOverTheCloseRuleItIsAnswered429() throws Exception {
        try (JdkClient reader = JdkClient.connect(relay.ws("/out/ctl/arm"));
             IngestPoster poster = IngestPoster.open(relay.port(), "POST", "/in/ctl/arm", -1, Map.of())) {
            await("joined", Duration.ofSeconds(5), () -> relay.server().connections() == 1);
            byte[] piece = "move\n".getBytes(StandardCharsets.US_ASCII);
            // Twenty pieces a second at most (a read may join two): over rate=5/s,burst=2 within two seconds.
            try {
                for (int i = 0; i < 40; i++) {
                    poster.write(piece, 0, piece.length);
                    Thread.sleep(50);
                }
            } catch (IOException answeredMeanwhile) {
                // the relay answered and closed while we were still writing
            }
            String response = poster.response();
            assertEquals(429, IngestPoster.status(response), response);
            assertTrue(HttpExchange.body(response).startsWith(
                    "429 Too Many Requests: over the send limit (rate=5/s,burst=2,bandwidth=80kbit,over-limit=close)"),
                    response);
            await("counted", Duration.ofSeconds(5), () -> overLimit("closed") == 1);
            assertTrue(reader.pending() >= 2, "the burst was relayed");
        }
    }
}
