package dev.crossbar.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.PrometheusText;
import dev.crossbar.server.testing.RelayServerExtension;
import io.netty.channel.EventLoop;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The built-in liveness check: probes through the fan-out to each event loop, their latency on
 * {@code /metrics}, and {@code /healthz} at 503 (naming the loop) while one is blocked, back to 200
 * once it runs again.
 */
class LoopHealthIT {

    private static final Duration INTERVAL = Duration.ofMillis(100);
    private static final Duration MAX_AGE = Duration.ofMillis(600);
    /** Generous: the bound is MAX_AGE + INTERVAL; a slow, shared machine gets seconds more. */
    private static final Duration DEADLINE = Duration.ofSeconds(8);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.eventLoops(2)
            .healthProbeInterval(INTERVAL).healthMaxProbeAge(MAX_AGE));

    /**
     * GET /healthz on a fresh connection; null if no answer within a second: the connection may
     * have landed on the blocked loop, which answers nothing until it runs again.
     */
    private String healthz() throws IOException {
        try (Socket s = new Socket("127.0.0.1", relay.port())) {
            s.setSoTimeout(1000);
            s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.ISO_8859_1));
            return HttpExchange.readResponse(s.getInputStream());
        } catch (SocketTimeoutException e) {
            return null;
        }
    }

    private String awaitHealthz(String statusLinePrefix) throws Exception {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        String last = null;
        while (System.nanoTime() < deadline) {
            String r = healthz();
            if (r != null) {
                last = r;
                if (r.startsWith(statusLinePrefix)) {
                    return r;
                }
            }
            Thread.sleep(50);
        }
        fail("no '" + statusLinePrefix + "' from /healthz within " + DEADLINE + "; last answer: " + last);
        return null;
    }

    @Test
    void aBlockedEventLoopTurnsHealthzTo503UntilItRunsAgain() throws Exception {
        awaitHealthz("HTTP/1.1 200");
        EventLoop blocked = relay.server().eventLoops().get(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        blocked.execute(() -> {
            running.countDown();
            try {
                release.await(30, TimeUnit.SECONDS); // the deliberate block
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            assertTrue(running.await(5, TimeUnit.SECONDS), "the blocking task started");
            String r = awaitHealthz("HTTP/1.1 503");
            String body = HttpExchange.body(r);
            assertTrue(body.startsWith("degraded: event loop 1 ("), body);
            assertTrue(body.contains("has delivered no probe for") && body.contains("since 20"), body);
            assertTrue(!body.contains("event loop 0"), "only the blocked loop is named: " + body);
        } finally {
            release.countDown();
        }
        String r = awaitHealthz("HTTP/1.1 200");
        assertEquals("ok\n", HttpExchange.body(r));
    }

    @Test
    void probeLatencyIsOnMetrics() throws Exception {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        PrometheusText metrics = null;
        while (System.nanoTime() < deadline) {
            String r = HttpExchange.exchange(relay.port(),
                    "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            metrics = PrometheusText.parse(HttpExchange.body(r));
            if (metrics.has("crossbar_health_probe_latency_seconds_count")
                    && metrics.value("crossbar_health_probe_latency_seconds_count", "loop", "0") >= 2
                    && metrics.value("crossbar_health_probe_latency_seconds_count", "loop", "1") >= 2) {
                break;
            }
            Thread.sleep(100);
        }
        assertNotNull(metrics);
        for (String loop : new String[] {"0", "1"}) {
            assertTrue(metrics.value("crossbar_health_probe_latency_seconds_count", "loop", loop) >= 2,
                    "probes delivered on loop " + loop);
            assertTrue(metrics.value("crossbar_health_probe_latency_seconds_sum", "loop", loop) > 0, loop);
            double age = metrics.value("crossbar_health_probe_age_seconds", "loop", loop);
            assertTrue(age < MAX_AGE.toMillis() / 1000.0, "a healthy loop's last probe is recent: " + age);
            assertTrue(metrics.value("crossbar_health_probe_latency_last_seconds", "loop", loop) > 0, loop);
        }
    }
}
