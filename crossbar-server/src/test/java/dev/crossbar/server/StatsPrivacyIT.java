package dev.crossbar.server;

import static dev.crossbar.server.testing.StatsReader.nextWhere;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.VerificationKeys;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.StatsReader;
import dev.crossbar.server.testing.Tokens;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Privacy by default on {@code /ws}: client addresses truncated to their /24 and user agents to the
 * product name, unless the reader holds the admin scope or the operator passes
 * {@code --stats-full-client-details}. (The page shows what the socket sends; the browser test checks
 * that it says so.)
 */
class StatsPrivacyIT {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String AGENT = "LabCam/2.1 (Linux; serial 0042) firmware/7";

    private static CrossbarServer start(UnaryOperator<ServerConfig.Builder> configure) {
        return CrossbarServer.start(configure.apply(ServerConfig.builder().listen("127.0.0.1:0").eventLoops(1)
                .statsInterval(Duration.ofMillis(200)).shutdownGrace(Duration.ofSeconds(1))).build());
    }

    private static URI uri(CrossbarServer s, String pathAndQuery) {
        return URI.create("ws://127.0.0.1:" + s.port() + pathAndQuery);
    }

    /** The one client row of the first snapshot that has one. */
    private static JsonNode row(JdkClient stats) {
        JsonNode s = nextWhere(stats, WAIT, snap -> snap.path("clients").size() == 1);
        JsonNode c = s.get("clients").get(0);
        ((com.fasterxml.jackson.databind.node.ObjectNode) c).put("_clientDetails", s.path("clientDetails").asText());
        return c;
    }

    @Test
    void byDefaultAddressesAndUserAgentsAreTruncated() throws Exception {
        try (CrossbarServer relay = start(b -> b);
             JdkClient cam = JdkClient.connectAs(uri(relay, "/in/cam"), AGENT);
             JdkClient stats = JdkClient.connect(uri(relay, "/ws"))) {
            JsonNode c = row(stats);
            assertEquals("127.0.0.0/24", c.path("remoteAddr").asText(), c.toString());
            assertEquals("LabCam", c.path("userAgent").asText(), c.toString());
            assertEquals("truncated", c.path("_clientDetails").asText());
            // The original crossbar's per-client format, too.
            try (JdkClient legacy = JdkClient.connect(uri(relay, "/ws?format=clients"))) {
                legacy.sendText("-");
                JsonNode l = StatsReader.next(legacy, WAIT);
                assertEquals("127.0.0.0/24", l.path("remoteAddr").asText(), l.toString());
                assertEquals("LabCam", l.path("userAgent").asText(), l.toString());
            }
        }
    }

    @Test
    void theOperatorsFlagShowsThemWhole() throws Exception {
        try (CrossbarServer relay = start(b -> b.statsFullClientDetails(true));
             JdkClient cam = JdkClient.connectAs(uri(relay, "/in/cam"), AGENT);
             JdkClient stats = JdkClient.connect(uri(relay, "/ws"))) {
            JsonNode c = row(stats);
            assertTrue(c.path("remoteAddr").asText().matches("127\\.0\\.0\\.1:\\d+"), c.toString());
            assertEquals(AGENT, c.path("userAgent").asText());
            assertEquals("full", c.path("_clientDetails").asText());
        }
    }

    @Test
    void onlyAReaderWithTheAdminScopeSeesThemWhole() throws Exception {
        AuthConfig auth = AuthConfig.builder()
                .keys(VerificationKeys.hmac(Tokens.SECRET.getBytes(StandardCharsets.UTF_8)))
                .audience(Tokens.AUDIENCE)
                .build();
        try (CrossbarServer relay = start(b -> b.auth(auth));
             JdkClient cam = JdkClient.connectWithHeaders(uri(relay, "/in/cam"), Map.of("User-Agent", AGENT,
                     "Authorization", "Bearer " + Tokens.hs256("/in/cam", "write")))) {
            String admin = URLEncoder.encode(Tokens.hs256(null, "admin"), StandardCharsets.UTF_8);
            String reader = URLEncoder.encode(Tokens.hs256("/out/cam", "read"), StandardCharsets.UTF_8);
            try (JdkClient stats = JdkClient.connect(uri(relay, "/ws?token=" + admin))) {
                JsonNode c = row(stats);
                assertTrue(c.path("remoteAddr").asText().startsWith("127.0.0.1:"), c.toString());
                assertEquals(AGENT, c.path("userAgent").asText());
                assertEquals("full", c.path("_clientDetails").asText());
            }
            try (JdkClient stats = JdkClient.connectWithToken(uri(relay, "/ws"), Tokens.hs256(null, "admin"))) {
                assertEquals(AGENT, row(stats).path("userAgent").asText(), "a header token counts too");
            }
            for (String query : new String[] {"", "?token=" + reader, "?token=not-a-jwt"}) {
                try (JdkClient stats = JdkClient.connect(uri(relay, "/ws" + query))) {
                    JsonNode c = row(stats);
                    assertEquals("127.0.0.0/24", c.path("remoteAddr").asText(), query + ": " + c);
                    assertEquals("LabCam", c.path("userAgent").asText(), query);
                    assertEquals("truncated", c.path("_clientDetails").asText());
                }
            }
        }
    }
}
