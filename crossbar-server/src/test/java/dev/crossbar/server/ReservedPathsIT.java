package dev.crossbar.server;

import static dev.crossbar.server.testing.StatsReader.next;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RelayServerExtension;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code /stats}, {@code /ws}, {@code /metrics} and {@code /healthz} are the relay's own, never topics. */
class ReservedPathsIT {

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension();

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void upgradesToReservedPathsNeverJoinATopic() throws Exception {
        for (String path : List.of("/stats", "/metrics", "/healthz", "/stats/", "//metrics", "/%73tats")) {
            String r = RawHttp.request(relay.port(), RawHttp.upgrade(path));
            assertTrue(r.startsWith("HTTP/1.1 200"), path + ": " + r);
            assertEquals(0, relay.server().topics().size(), path);
        }
        for (String path : List.of("/ws", "/ws/", "//ws", "/%77s")) {
            String head = RawHttp.upgradeHead(relay.port(), path);
            assertTrue(head.startsWith("HTTP/1.1 101"), path + ": " + head);
            assertEquals(0, relay.server().topics().size(), path + " became a stats socket, not a topic");
        }
        // Below a reserved path is an ordinary topic.
        try (JdkClient c = JdkClient.connect(relay.ws("/stats/lab"))) {
            RelayServerExtension.await("topic /stats/lab", Duration.ofSeconds(5), () -> relay.server().topics().size() == 1);
        }
    }

    @Test
    void statsSocketIsAStatsSocketNotARelay() throws Exception {
        try (JdkClient stats = JdkClient.connect(relay.ws("/ws"));
             JdkClient other = JdkClient.connect(relay.ws("/ws"))) {
            assertTrue(next(stats, Duration.ofSeconds(5)).has("clients"));
            assertTrue(next(other, Duration.ofSeconds(5)).has("clients"));
            stats.sendText("hello other stats socket");
            // The reply is a snapshot, and the other socket gets nothing relayed.
            assertTrue(next(stats, Duration.ofSeconds(5)).has("topics"));
            assertEquals(null, other.poll(Duration.ofMillis(300)));
            assertEquals(0, relay.server().connections());
        }
    }

    @Test
    void plainRequestsGetClearAnswers() throws Exception {
        HttpResponse<String> ws = http.send(HttpRequest.newBuilder(relay.http("/ws")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(426, ws.statusCode());
        assertTrue(ws.body().contains("/stats"), ws.body());
        HttpResponse<String> post = http.send(HttpRequest.newBuilder(relay.http("/stats"))
                .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(405, post.statusCode());
        assertEquals("GET", post.headers().firstValue("allow").orElse(""));
    }

    @Test
    void statsPageIsSelfContainedAndItsPolicyAllowsOnlyItsOwnScript() throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(relay.http("/stats")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        assertEquals("text/html; charset=utf-8", r.headers().firstValue("content-type").orElse(""));
        String page = r.body();
        String csp = r.headers().firstValue("content-security-policy").orElse("");
        assertTrue(csp.startsWith("default-src 'none';"), csp);
        assertTrue(csp.contains("script-src " + sha256(page, "script")), "CSP must allow exactly the page's script: " + csp);
        assertTrue(csp.contains("style-src " + sha256(page, "style")), csp);
        assertEquals("nosniff", r.headers().firstValue("x-content-type-options").orElse(""));
        // No CDN, no external anything: lab networks are often closed. (The SVG namespace of the
        // charts is a name, never fetched: the only URL allowed.)
        String urls = page.replace("\"http://www.w3.org/2000/svg\"", "");
        assertFalse(urls.contains("http://") || urls.contains("https://") || urls.contains("src="), "external resource");
        assertFalse(page.contains("innerHTML") || page.contains("outerHTML") || page.contains("insertAdjacentHTML")
                || page.contains("document.write"), "the page must build its DOM from text, not HTML");
        // /ws beside the page's own path (a proxy's prefix kept), also from /stats/: the browser test runs it.
        assertTrue(page.contains("new URL(dir + \"ws?format=snapshot\", window.location.origin)"), "reads /ws beside itself");
    }

    private static String sha256(String page, String tag) throws Exception {
        Matcher m = Pattern.compile("<" + tag + ">(.*?)</" + tag + ">", Pattern.DOTALL).matcher(page);
        assertTrue(m.find(), tag);
        byte[] d = MessageDigest.getInstance("SHA-256").digest(m.group(1).getBytes(StandardCharsets.UTF_8));
        return "'sha256-" + Base64.getEncoder().encodeToString(d) + "'";
    }
}
