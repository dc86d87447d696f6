package dev.crossbar.server.auth;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.schema.OneToMany;
import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.VerificationKeys;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.IngestPoster;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.Tokens;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * HTTP ingest under access control: the token, by header or {@code ?token=}, decides as for a
 * WebSocket publisher on the same path (401 without a valid one, 403 for another stream or without
 * write), and a token that expires or is revoked while the body is still coming ends it with 401.
 */
class HttpIngestAccessIT {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.auth(AuthConfig.builder()
            .keys(VerificationKeys.hmac(Tokens.SECRET.getBytes(StandardCharsets.UTF_8)))
            .audience(Tokens.AUDIENCE)
            .clockSkew(Duration.ZERO)
            .build()));

    private static final byte[] READING = "{\"t\":21.5}\n".getBytes(StandardCharsets.US_ASCII);

    private String post(String pathAndQuery, Map<String, String> headers) throws Exception {
        try (IngestPoster poster = IngestPoster.open(relay.port(), "POST", pathAndQuery, READING.length, headers)) {
            poster.write(READING, 0, READING.length);
            return poster.response();
        }
    }

    private static void assertRefused(String response, int status, String reason) {
        assertEquals(status, IngestPoster.status(response), response);
        assertEquals(status + (status == 401 ? " Unauthorized" : " Forbidden") + ": " + reason + "\n",
                HttpExchange.body(response), response);
        assertTrue(response.toLowerCase(java.util.Locale.ROOT).contains("www-authenticate: bearer realm=\"crossbar\""), response);
    }

    private JdkClient subscriber() {
        JdkClient sub = JdkClient.connectWithToken(relay.ws("/out/cam"), Tokens.hs256("/out/cam", "read"));
        await("subscriber joined", WAIT, () -> relay.server().topics().size() == 1);
        return sub;
    }

    @Test
    void theTokenDecidesAsForAWebSocketPublisher() throws Exception {
        assertRefused(post("/in/cam", Map.of()), 401,
                "missing token (expected: Authorization: Bearer <jwt> or ?token=<jwt>)");
        assertRefused(post("/in/cam", Map.of("Authorization", "Bearer not-a-jwt")), 401,
                "malformed token: not a JSON Web Token");
        assertRefused(post("/in/cam", Map.of("Authorization", "Bearer " + Tokens.hs256("/in/other", "write"))), 403,
                "token is for /in/other, not /in/cam");
        assertRefused(post("/in/cam", Map.of("Authorization", "Bearer " + Tokens.hs256("/in/cam", "read"))), 403,
                "token does not grant write on /in/cam");
        assertEquals(0, relay.server().topics().size(), "a refused poster never joined");

        try (JdkClient sub = subscriber()) {
            String byHeader = post("/in/cam", Map.of("Authorization", "Bearer " + Tokens.hs256("/in/cam", "write")));
            assertEquals(200, IngestPoster.status(byHeader), byHeader);
            assertArrayEquals(READING, sub.take(WAIT).data());
            String byQuery = post("/in/cam?token=" + URLEncoder.encode(Tokens.hs256("/in/cam", "write"),
                    StandardCharsets.UTF_8), Map.of());
            assertEquals(200, IngestPoster.status(byQuery), byQuery);
            assertArrayEquals(READING, sub.take(WAIT).data());
        }
    }

    @Test
    void aTokenThatExpiresWhileTheBodyComesEndsItWith401() throws Exception {
        String expiring = Tokens.hs256("/in/cam", "write",
                c -> c.expirationTime(Date.from(Instant.now().plusSeconds(2))));
        try (JdkClient sub = subscriber();
             IngestPoster poster = IngestPoster.open(relay.port(), "POST", "/in/cam", -1,
                     Map.of("Authorization", "Bearer " + expiring))) {
            poster.write(READING, 0, READING.length);
            assertArrayEquals(READING, sub.take(WAIT).data(), "relayed while the token is valid");
            assertRefused(poster.response(), 401, "token expired");
            await("left the stream", WAIT, () -> relay.server().topics().get(
                    new TopicKey(OneToMany.INSTANCE, "cam")).size() == 1);
            assertEquals(1, relay.server().access().endedExpired());
        }
    }

    @Test
    void revokingThePostersTokenEndsItsBodyWith401() throws Exception {
        String token = Tokens.hs256("/in/cam", "write");
        String jti = com.nimbusds.jwt.SignedJWT.parse(token).getJWTClaimsSet().getJWTID();
        try (JdkClient sub = subscriber();
             IngestPoster poster = IngestPoster.open(relay.port(), "POST", "/in/cam", -1,
                     Map.of("Authorization", "Bearer " + token))) {
            poster.write(READING, 0, READING.length);
            assertArrayEquals(READING, sub.take(WAIT).data());
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(relay.http(RevokeEndpoint.PATH))
                    .header("Authorization", "Bearer " + Tokens.hs256(null, "admin"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"jti\":\"" + jti + "\"}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(r.body().contains("\"closed\":1"), r.body());
            assertRefused(poster.response(), 401, "token revoked");
            assertEquals(1, relay.server().access().endedRevoked());
        }
    }
}
