package dev.crossbar.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.VerificationKeys;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.Tokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** The clock skew allowed on exp and nbf, the token length bound, and the revocation list bound, over the wire. */
class ClockSkewAndLimitsIT {

    private static CrossbarServer start(UnaryOperator<AuthConfig.Builder> auth) {
        return CrossbarServer.start(ServerConfig.builder()
                .listen("127.0.0.1:0")
                .eventLoops(1)
                .shutdownGrace(Duration.ofSeconds(1))
                .auth(auth.apply(AuthConfig.builder()
                        .keys(VerificationKeys.hmac(Tokens.SECRET.getBytes(StandardCharsets.UTF_8)))
                        .audience(Tokens.AUDIENCE)).build())
                .build());
    }

    private static String upgrade(CrossbarServer s, String pathAndQuery, String token) throws Exception {
        return HttpExchange.upgradeHead(s.port(), pathAndQuery, token == null ? Map.of() : Map.of("Authorization", "Bearer " + token));
    }

    @Test
    void theSkewIsAllowedOnExpAndNbfAndNoMore() throws Exception {
        try (CrossbarServer server = start(b -> b.clockSkew(Duration.ofSeconds(30)))) {
            long now = Instant.now().getEpochSecond();
            String lateButWithinSkew = Tokens.hs256("/out/cam", "read", c -> c.expirationTime(new Date((now - 10) * 1000)));
            assertTrue(upgrade(server, "/out/cam", lateButWithinSkew).startsWith("HTTP/1.1 101"));
            String earlyButWithinSkew = Tokens.hs256("/out/cam", "read", c -> c.notBeforeTime(new Date((now + 10) * 1000)));
            assertTrue(upgrade(server, "/out/cam", earlyButWithinSkew).startsWith("HTTP/1.1 101"));
            String tooLate = Tokens.hs256("/out/cam", "read", c -> c.expirationTime(new Date((now - 40) * 1000)));
            assertTrue(upgrade(server, "/out/cam", tooLate).startsWith("HTTP/1.1 401"));
            String tooEarly = Tokens.hs256("/out/cam", "read", c -> c.notBeforeTime(new Date((now + 40) * 1000)));
            assertTrue(upgrade(server, "/out/cam", tooEarly).startsWith("HTTP/1.1 401"));
        }
    }

    @Test
    void anOverlongTokenIsRefusedBeforeItIsParsed() throws Exception {
        try (CrossbarServer server = start(b -> b)) {
            String r = HttpExchange.upgrade(server.port(), "/out/cam?token=" + "a".repeat(9000), Map.of());
            assertTrue(r.startsWith("HTTP/1.1 401"), r);
            assertEquals("401 Unauthorized: token too long: 9000 characters (expected: <= 8192)\n", HttpExchange.body(r));
        }
    }

    @Test
    void aFullRevocationListRefusesWith503() throws Exception {
        try (CrossbarServer server = start(b -> b.maxRevocations(1))) {
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String admin = Tokens.hs256(null, "admin");
            URI uri = URI.create("http://127.0.0.1:" + server.port() + RevokeEndpoint.PATH);
            HttpResponse<String> first = http.send(HttpRequest.newBuilder(uri).header("Authorization", "Bearer " + admin)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"jti\":\"one\"}")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, first.statusCode(), first.body());
            HttpResponse<String> second = http.send(HttpRequest.newBuilder(uri).header("Authorization", "Bearer " + admin)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"jti\":\"two\"}")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(503, second.statusCode());
            assertEquals("503 Service Unavailable: revocation list full (1 unexpired entries; see --auth-max-revocations)\n",
                    second.body());
        }
    }
}
