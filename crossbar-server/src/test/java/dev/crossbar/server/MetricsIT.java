package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.config.BuildInfo;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.PrometheusText;
import dev.crossbar.server.testing.RelayServerExtension;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code /metrics} parses as Prometheus text and its counters match the traffic sent. */
class MetricsIT {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String ONE_TO_N = "1:n";
    private static final String N_TO_N = "n:n";

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension();

    private final HttpClient http = HttpClient.newHttpClient();

    private PrometheusText scrape() throws Exception {
        // Counters are read from one walk over the connections for a quarter of a second; wait that out.
        Thread.sleep(300);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(relay.http("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("content-type").orElse("").startsWith("text/plain; version=0.0.4"),
                r.headers().toString());
        return PrometheusText.parse(r.body());
    }

    private void awaitMembers(int n) {
        await(n + " members", WAIT, () -> relay.server().topics().topics().stream()
                .mapToInt(t -> t.members().length).sum() == n);
    }

    @Test
    void countersMatchTheTrafficSent() throws Exception {
        int published = 40;
        int chatEach = 7;
        try (JdkClient pub = JdkClient.connect(relay.ws("/in/secret-stream-name"));
             JdkClient sub1 = JdkClient.connect(relay.ws("/out/secret-stream-name"));
             JdkClient sub2 = JdkClient.connect(relay.ws("/out/secret-stream-name"));
             JdkClient a = JdkClient.connect(relay.ws("/lab/secret-room"));
             JdkClient b = JdkClient.connect(relay.ws("/lab/secret-room"));
             JdkClient c = JdkClient.connect(relay.ws("/lab/secret-room"))) {
            awaitMembers(6);
            for (int i = 0; i < published; i++) {
                pub.sendBinary(new byte[250]);
            }
            sub1.sendText("refused one");
            sub1.sendText("refused two");
            for (JdkClient m : new JdkClient[] {a, b, c}) {
                for (int i = 0; i < chatEach; i++) {
                    m.sendText("0123456789");
                }
            }
            for (int i = 0; i < published; i++) {
                sub1.take();
                sub2.take();
            }
            for (JdkClient m : new JdkClient[] {a, b, c}) {
                for (int i = 0; i < 2 * chatEach; i++) {
                    m.take();
                }
            }

            PrometheusText m = scrape();
            assertEquals("counter", m.type("crossbar_messages_in_total"));
            assertEquals("gauge", m.type("crossbar_connections"));
            assertEquals(published, m.value("crossbar_messages_in_total", "schema", ONE_TO_N, "role", "publisher"));
            assertEquals(published * 250, m.value("crossbar_payload_in_bytes_total", "schema", ONE_TO_N, "role", "publisher"));
            assertEquals(2, m.value("crossbar_messages_in_total", "schema", ONE_TO_N, "role", "subscriber"));
            assertEquals(2, m.value("crossbar_messages_refused_total", "schema", ONE_TO_N, "role", "subscriber"));
            assertEquals(2 * published, m.value("crossbar_messages_out_total", "schema", ONE_TO_N, "role", "subscriber"));
            assertEquals(2 * published * 250, m.value("crossbar_payload_out_bytes_total", "schema", ONE_TO_N, "role", "subscriber"));
            assertEquals(3 * chatEach, m.value("crossbar_messages_in_total", "schema", N_TO_N, "role", "member"));
            assertEquals(3 * chatEach * 10, m.value("crossbar_payload_in_bytes_total", "schema", N_TO_N, "role", "member"));
            assertEquals(6 * chatEach, m.value("crossbar_messages_out_total", "schema", N_TO_N, "role", "member"));
            assertEquals(0, m.value("crossbar_messages_dropped_total", "schema", N_TO_N, "role", "member"));
            assertEquals(1, m.value("crossbar_connections", "schema", ONE_TO_N, "role", "publisher"));
            assertEquals(2, m.value("crossbar_connections", "schema", ONE_TO_N, "role", "subscriber"));
            assertEquals(3, m.value("crossbar_connections", "schema", N_TO_N, "role", "member"));
            assertEquals(1, m.value("crossbar_topics", "schema", ONE_TO_N));
            assertEquals(1, m.value("crossbar_topics", "schema", N_TO_N));
        }
        // Everyone has left and both topics are gone: the counters keep what was counted.
        awaitMembers(0);
        PrometheusText after = scrape();
        assertEquals(published, after.value("crossbar_messages_in_total", "schema", ONE_TO_N, "role", "publisher"));
        assertEquals(2 * published, after.value("crossbar_messages_out_total", "schema", ONE_TO_N, "role", "subscriber"));
        assertEquals(6 * chatEach, after.value("crossbar_messages_out_total", "schema", N_TO_N, "role", "member"));
        assertEquals(0, after.value("crossbar_connections", "schema", N_TO_N, "role", "member"));
        assertEquals(0, after.value("crossbar_topics", "schema", ONE_TO_N));
    }

    @Test
    void noTopicOrClientIdBecomesALabel() throws Exception {
        try (JdkClient a = JdkClient.connectAs(relay.ws("/lab/secret-topic-42"), "secret-agent-42")) {
            awaitMembers(1);
            a.sendText("x");
            PrometheusText m = scrape();
            for (PrometheusText.Sample s : m.samples()) {
                for (String v : s.labels().values()) {
                    assertFalse(v.contains("secret"), s.toString());
                }
                if (s.name().startsWith("crossbar_")) {
                    // loop: the event loop's index, as many values as loops (the liveness probe's meters);
                    // version: one value, the build's
                    assertTrue(Set.of("schema", "role", "reason", "loop", "version").containsAll(s.labels().keySet()),
                            s.toString());
                }
            }
        }
    }

    @Test
    void handshakeFailuresAreCountedByReason() throws Exception {
        PrometheusText before = scrape();
        assertEquals(0, before.value("crossbar_handshake_failures_total", "reason", "not_upgrade"));
        http.send(HttpRequest.newBuilder(relay.http("/lab/cam")).build(), HttpResponse.BodyHandlers.ofString());
        http.send(HttpRequest.newBuilder(relay.http("/lab/cam2")).build(), HttpResponse.BodyHandlers.ofString());
        RawHttp.request(relay.port(), RawHttp.upgrade("/a/../b"));
        PrometheusText after = scrape();
        assertEquals(2, after.value("crossbar_handshake_failures_total", "reason", "not_upgrade"));
        assertEquals(1, after.value("crossbar_handshake_failures_total", "reason", "bad_route"));
        assertEquals(0, after.value("crossbar_handshake_failures_total", "reason", "timeout"));
    }

    @Test
    void jvmNettyAndLiveGaugesArePresentAndSurviveGc() throws Exception {
        try (JdkClient stats = JdkClient.connect(relay.ws("/ws"))) {
            await("stats socket", WAIT, () -> relay.server().stats().sockets() == 1);
            // Micrometer holds gauge targets weakly: after a GC a gauge whose target was collected reads NaN.
            System.gc();
            PrometheusText m = scrape();
            for (PrometheusText.Sample s : m.samples()) {
                if (s.name().startsWith("crossbar_") || s.name().startsWith("netty_")) {
                    assertFalse(Double.isNaN(s.value()), s.toString());
                }
            }
            assertEquals(1, m.value("crossbar_stats_sockets"));
            assertTrue(m.has("jvm_memory_used_bytes"));
            assertTrue(m.has("jvm_threads_live_threads"));
            assertTrue(m.has("jvm_gc_memory_allocated_bytes_total") || m.has("jvm_gc_pause_seconds_count"));
            assertTrue(m.has("netty_allocator_memory_used"));
            assertTrue(m.value("netty_direct_memory_max_bytes") > 0);
            assertTrue(m.has("netty_direct_memory_used_bytes"));
            assertEquals(2, m.samples().stream().filter(s -> s.name().equals("netty_eventexecutor_tasks_pending")).count(),
                    "one per event loop (the test relay has two)");
            assertTrue(m.has("crossbar_fanout_backlog_bytes"));
        }
    }

    @Test
    void buildInfoNamesTheVersionThatVersionPrints() throws Exception {
        PrometheusText m = scrape();
        List<PrometheusText.Sample> info = m.samples().stream().filter(s -> s.name().equals("crossbar_build_info")).toList();
        assertEquals(1, info.size(), info.toString());
        assertEquals(1, info.get(0).value());
        // The version Maven filtered into the build (the one --version prints, ReleaseJarIT checks the jar's).
        String version = info.get(0).labels().get("version");
        assertEquals(BuildInfo.version(), version);
        assertTrue(version.matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?"), "a version from the POM: " + version);
    }
}
