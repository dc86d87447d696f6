package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static dev.crossbar.server.testing.StatsReader.next;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RelayServerExtension;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The charts' history: a stats socket's first snapshot carries each topic's recent message rate in
 * and bytes out per tick, so a page just opened draws the last minutes at once; later snapshots do not
 * repeat it.
 */
class StatsTrendsIT {

    private static final Duration INTERVAL = Duration.ofMillis(200);
    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.statsInterval(INTERVAL));

    @Test
    void theFirstSnapshotCarriesEachTopicsRecentRatesAndLaterOnesDoNot() throws Exception {
        try (JdkClient pub = JdkClient.connect(relay.ws("/in/cam"));
             JdkClient sub = JdkClient.connect(relay.ws("/out/cam"))) {
            await("publisher and subscriber joined", WAIT, () -> relay.server().topics().size() == 1
                    && relay.server().topics().topics().iterator().next().members().length == 2);
            // Traffic over several ticks: each tick records a point.
            long until = System.nanoTime() + INTERVAL.multipliedBy(6).toNanos();
            int sent = 0;
            while (System.nanoTime() < until) {
                pub.sendBinary(new byte[500]);
                sent++;
                Thread.sleep(10);
            }
            for (int i = 0; i < sent; i++) {
                sub.take(WAIT);
            }
            try (JdkClient stats = JdkClient.connect(relay.ws("/ws"))) {
                JsonNode first = next(stats, WAIT);
                JsonNode trend = first.path("trends").path("1:n /out/cam");
                assertTrue(trend.path("rateIn").isArray(), first.toString());
                int points = trend.path("rateIn").size();
                assertTrue(points >= 3, "points: " + points);
                assertEquals(points, trend.path("bytesOut").size());
                double peakIn = 0;
                double peakOut = 0;
                for (int i = 0; i < points; i++) {
                    peakIn = Math.max(peakIn, trend.path("rateIn").get(i).asDouble());
                    peakOut = Math.max(peakOut, trend.path("bytesOut").get(i).asDouble());
                }
                // About 100 messages/s were sent; any live rate will do, a flat zero would not.
                assertTrue(peakIn > 10, "peak rate in " + peakIn + " in " + trend);
                assertTrue(peakOut > 10 * 500, "peak bytes out " + peakOut + " in " + trend);
                JsonNode later = next(stats, WAIT);
                assertTrue(later.path("trends").isMissingNode(), "only the first snapshot: " + later);
            }
        }
    }
}
