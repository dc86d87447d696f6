package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.LogFormat;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.VerificationKeys;
import dev.crossbar.server.logging.Logs;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.IngestPoster;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.StatsReader;
import dev.crossbar.server.testing.Tokens;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lab page's one token for all its streams (grants by pattern), who holds it in the admin's
 * statistics, the audit trail of a session's life (an HTTP poster's too), and revocations kept
 * across a restart.
 */
class CampusAccessIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @AfterEach
    void auditOff() {
        Logs.configure(LogFormat.TEXT, "warn", null);
    }

    private CrossbarServer start() {
        return CrossbarServer.start(ServerConfig.builder().listen("127.0.0.1:0").eventLoops(1).nodeName("campus-1")
                .shutdownGrace(Duration.ofSeconds(1))
                .auth(AuthConfig.builder().keys(VerificationKeys.hmac(Tokens.SECRET.getBytes(StandardCharsets.UTF_8)))
                        .audience(Tokens.AUDIENCE).revocationFile(dir.resolve("revoked.jsonl")).build()).build());
    }

    /** The relay's answer to an upgrade: the head alone when it upgrades, the whole refusal otherwise. */
    private static String upgrade(CrossbarServer s, String path, String token) throws Exception {
        Map<String, String> h = Map.of("Authorization", "Bearer " + token);
        String head = HttpExchange.upgradeHead(s.port(), path, h);
        return head.startsWith("HTTP/1.1 101") ? head : HttpExchange.upgrade(s.port(), path, h);
    }

    private static String post(CrossbarServer s, String path, String body) throws Exception {
        String admin = Tokens.hs256(Tokens.claims(null, "admin").build());
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        return HttpExchange.exchange(s.port(), ("POST " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + admin
                + "\r\nContent-Type: application/json\r\nContent-Length: " + b.length + "\r\nConnection: close\r\n\r\n"
                + body).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void oneTokenGrantsALabPagesStreamsByPatternEachWithItsScopes() throws Exception {
        String lab = Tokens.hs256(Tokens.claims(null, null).claim("grants", List.of(
                Map.of("topic", "/out/lab/p3/cam", "scope", "read"),
                Map.of("topic", "/lab/p3/**", "scope", "read write"))).build());
        String pattern = Tokens.hs256("/lab/p3/**", "read");
        try (CrossbarServer s = start()) {
            assertTrue(upgrade(s, "/out/lab/p3/cam", lab).startsWith("HTTP/1.1 101"));
            assertTrue(upgrade(s, "/in/lab/p3/data", lab).startsWith("HTTP/1.1 101"), "the pattern grants write");
            assertTrue(upgrade(s, "/lab/p3/chat", lab).startsWith("HTTP/1.1 101"));
            String other = upgrade(s, "/in/lab/p4/data", lab);
            assertTrue(other.startsWith("HTTP/1.1 403") && other.contains("token grants nothing on /in/lab/p4/data"), other);
            // A topic claim may be a pattern too; its scope still decides the role.
            assertTrue(upgrade(s, "/out/lab/p3/cam", pattern).startsWith("HTTP/1.1 101"));
            String write = upgrade(s, "/in/lab/p3/cam", pattern);
            assertTrue(write.startsWith("HTTP/1.1 403") && write.contains("does not grant write"), write);
        }
    }

    @Test
    void theAuditTrailTheAdminsViewAndRevocationsThatOutliveARestart() throws Exception {
        Path audit = dir.resolve("audit.jsonl");
        Logs.configure(LogFormat.TEXT, "warn", audit.toString());
        String student = Tokens.hs256(Tokens.claims("/lab/p3/chat", "read write").subject("student-42").jwtID("jti-42").build());
        String admin = Tokens.hs256(Tokens.claims(null, "admin").build());
        try (CrossbarServer s = start()) {
            try (JdkClient a = JdkClient.connectWithToken(URI.create("ws://127.0.0.1:" + s.port() + "/lab/p3/chat"), student);
                 JdkClient b = JdkClient.connectWithToken(URI.create("ws://127.0.0.1:" + s.port() + "/lab/p3/chat"),
                         Tokens.hs256("/lab/p3/chat", "read write"));
                 JdkClient stats = JdkClient.connect(URI.create("ws://127.0.0.1:" + s.port() + "/ws?token=" + admin))) {
                await("joined", Duration.ofSeconds(5), () -> s.topics().size() == 1 && s.connections() == 2);
                a.sendText("hello");
                assertEquals("hello", b.take(Duration.ofSeconds(5)).string());
                // The admin's view of /stats names who holds each token.
                stats.sendText("-");
                JsonNode snap = StatsReader.nextWhere(stats, Duration.ofSeconds(5), n -> n.get("clients").size() == 2);
                List<String> subs = new ArrayList<>();
                snap.get("clients").forEach(c -> subs.add(c.path("sub").asText(null)));
                assertTrue(subs.contains("student-42"), snap.toString());
                // Revoked: the student's connection is closed, the other stays.
                String answer = post(s, "/admin/revoke", "{\"jti\":\"jti-42\"}");
                assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
                assertTrue(answer.contains("\"kept\":\"file " + dir.resolve("revoked.jsonl") + "\""), answer);
                assertEquals(1008, a.awaitClose(Duration.ofSeconds(5)));
                assertEquals("token revoked", a.closeReason.join());
                String refused = upgrade(s, "/lab/p3/chat", student);
                assertTrue(refused.startsWith("HTTP/1.1 401"), refused);
                // Disconnected by topic: the other one goes too, and is told why.
                String d = post(s, "/admin/disconnect", "{\"topic\":\"/lab/p3/chat\"}");
                assertTrue(d.contains("\"closed\":1"), d);
                assertEquals(1008, b.awaitClose(Duration.ofSeconds(5)));
                assertEquals("disconnected by the administrator", b.closeReason.join());
            }
        }
        // Restarted: the revocation was kept in the file.
        try (CrossbarServer s = start()) {
            String refused = upgrade(s, "/lab/p3/chat", student);
            assertTrue(refused.startsWith("HTTP/1.1 401") && refused.contains("token revoked"), refused);
        }
        List<JsonNode> events = new ArrayList<>();
        await("audit written", Duration.ofSeconds(5), () -> {
            events.clear();
            try {
                for (String line : Files.readAllLines(audit)) {
                    events.add(JSON.readTree(line));
                }
            } catch (Exception e) {
                return false;
            }
            return events.stream().filter(e -> e.path("event").asText().equals("refused")).count() >= 2;
        });
        JsonNode connect = find(events, "connect", "student-42");
        assertEquals("campus-1", connect.path("node").asText());
        assertEquals("127.0.0.0/24", connect.path("address").asText(), "truncated as statistics truncate it");
        assertEquals("jti-42", connect.path("jti").asText());
        assertEquals("/lab/p3/chat", connect.path("topic").asText());
        assertEquals("member", connect.path("role").asText());
        JsonNode revoked = find(events, "revoked", "student-42");
        assertEquals("token revoked", revoked.path("reason").asText());
        JsonNode close = find(events, "close", "student-42");
        assertEquals(1008, close.path("code").asInt());
        assertEquals(5, close.path("bytesIn").asLong());
        JsonNode admin1 = events.stream().filter(e -> e.path("action").asText().equals("revoke")).findFirst().orElseThrow();
        assertEquals("jti-42", admin1.path("jti").asText());
        assertTrue(events.stream().anyMatch(e -> e.path("action").asText().equals("disconnect")));
        assertTrue(events.stream().anyMatch(e -> e.path("event").asText().equals("refused")
                && e.path("reason").asText().equals("token revoked")));
        assertFalse(Files.readString(audit).contains("127.0.0.1"), "no whole address in the trail");
    }

    private static JsonNode find(List<JsonNode> events, String type, String sub) {
        return events.stream().filter(e -> e.path("event").asText().equals(type) && sub.equals(e.path("sub").asText()))
                .findFirst().orElseThrow(() -> new AssertionError("no " + type + " event for " + sub + " in " + events));
    }

    @Test
    void anHttpPosterIsInTheAuditTrailAndAnAdminCanDisconnectIt() throws Exception {
        Path audit = dir.resolve("audit.jsonl");
        Logs.configure(LogFormat.TEXT, "warn", audit.toString());
        String camera = Tokens.hs256(Tokens.claims("/in/lab/p3/cam", "write").subject("camera-3").jwtID("jti-cam").build());
        try (CrossbarServer s = start();
             JdkClient viewer = JdkClient.connectWithToken(URI.create("ws://127.0.0.1:" + s.port() + "/out/lab/p3/cam"),
                     Tokens.hs256("/out/lab/p3/cam", "read"));
             IngestPoster poster = IngestPoster.open(s.port(), "POST", "/in/lab/p3/cam", -1,
                     Map.of("Authorization", "Bearer " + camera))) {
            byte[] piece = "frame\n".getBytes(StandardCharsets.US_ASCII);
            poster.write(piece, 0, piece.length);
            assertEquals("frame\n", new String(viewer.take(Duration.ofSeconds(5)).data(), StandardCharsets.US_ASCII));
            String d = post(s, "/admin/disconnect", "{\"sub\":\"camera-3\"}");
            assertTrue(d.contains("\"closed\":1"), d);
            String response = poster.response();
            assertTrue(response.startsWith("HTTP/1.1 403") && response.contains("disconnected by the administrator"),
                    response);
        }
        List<JsonNode> events = new ArrayList<>();
        await("audit written", Duration.ofSeconds(5), () -> {
            events.clear();
            try {
                for (String line : Files.readAllLines(audit)) {
                    events.add(JSON.readTree(line));
                }
            } catch (Exception e) {
                return false;
            }
            return events.stream().anyMatch(e -> e.path("event").asText().equals("close"));
        });
        JsonNode connect = find(events, "connect", "camera-3");
        assertEquals("/in/lab/p3/cam", connect.path("topic").asText());
        assertEquals("jti-cam", connect.path("jti").asText());
        assertTrue(connect.path("ingest").asBoolean(), connect.toString());
        JsonNode close = find(events, "close", "camera-3");
        assertEquals(403, close.path("code").asInt());
        assertEquals(6, close.path("bytesIn").asLong());
    }
}
