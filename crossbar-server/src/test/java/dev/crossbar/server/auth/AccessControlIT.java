package dev.crossbar.server.auth;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jwt.JWTClaimsSet;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.VerificationKeys;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.Tokens;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tokens against a real relay (HS256, no clock skew so expiry is exact) with real clients: every
 * refusal with its status and reason, what a valid token allows, expiry, revocation, and a flood of
 * bad tokens beside an authorised stream.
 */
class AccessControlIT {

    private static final Duration QUIET = Duration.ofMillis(300);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.auth(AuthConfig.builder()
            .keys(VerificationKeys.hmac(Tokens.SECRET.getBytes(StandardCharsets.UTF_8)))
            .audience(Tokens.AUDIENCE)
            .clockSkew(Duration.ZERO)
            .build()));

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private String upgrade(String path, String token) throws Exception {
        return HttpExchange.upgrade(relay.port(), path, token == null ? Map.of() : Map.of("Authorization", "Bearer " + token));
    }

    private static void assertRefused(String response, int status, String reason) {
        String phrase = status == 401 ? "Unauthorized" : "Forbidden";
        assertTrue(response.startsWith("HTTP/1.1 " + status + " " + phrase + "\r\n"), response);
        assertEquals(status + " " + phrase + ": " + reason + "\n", HttpExchange.body(response), response);
        assertFalse(response.contains("101 Switching"), response);
    }

    private URI withToken(String path, String token) {
        return relay.ws(path + "?token=" + URLEncoder.encode(token, StandardCharsets.UTF_8));
    }

    private void awaitMembers(int n) {
        await(n + " members joined", Duration.ofSeconds(5), () -> relay.server().topics().topics().stream()
                .mapToInt(t -> t.members().length).sum() == n);
    }

    @Test
    void validTokensRelayByHeaderAndByQueryParameter() throws Exception {
        try (JdkClient pub = JdkClient.connectWithToken(relay.ws("/in/cam"), Tokens.hs256("/in/cam", "write"));
             JdkClient jdkSub = JdkClient.connect(withToken("/out/cam", Tokens.hs256("/out/cam", "read")));
             NettyClient nettySub = NettyClient.connect(relay.ws("/out/cam"), null,
                     new DefaultHttpHeaders().add("Authorization", "Bearer " + Tokens.hs256("/out/cam", "read")))) {
            awaitMembers(3);
            for (int i = 0; i < 10; i++) {
                pub.sendText("frame " + i);
            }
            for (int i = 0; i < 10; i++) {
                assertEquals("frame " + i, jdkSub.take().string());
                assertEquals("frame " + i, nettySub.take().string());
            }
        }
    }

    @Test
    void missingMalformedOrInvalidTokensAre401WithTheirReason() throws Exception {
        String missing = upgrade("/out/cam", null);
        assertRefused(missing, 401, "missing token (expected: Authorization: Bearer <jwt> or ?token=<jwt>)");
        assertTrue(missing.toLowerCase(java.util.Locale.ROOT).contains("www-authenticate: bearer realm=\"crossbar\"\r\n"), missing);

        String basic = HttpExchange.upgrade(relay.port(), "/out/cam", Map.of("Authorization", "Basic dXNlcjpwYXNz"));
        assertRefused(basic, 401, "Authorization header is not a Bearer token");

        String garbage = upgrade("/out/cam", "not-a-jwt");
        assertRefused(garbage, 401, "malformed token: not a JSON Web Token");
        assertTrue(garbage.contains("error=\"invalid_token\""), garbage);

        JWTClaimsSet good = Tokens.claims("/out/cam", "read").build();
        assertRefused(upgrade("/out/cam", Tokens.none(good)), 401, "unsigned token (alg none) refused");
        assertRefused(upgrade("/out/cam", Tokens.rs256(Tokens.rsaKeyPair(), null, good)), 401,
                "algorithm RS256 not accepted (expected: HS256)");
        assertRefused(upgrade("/out/cam", Tokens.hs256WithSecret(good, "another-secret-0123456789abcdefgh")), 401, "bad signature");

        // The payload of a valid token swapped for one naming another topic: the signature no longer matches.
        String[] parts = Tokens.hs256(good).split("\\.");
        String forged = parts[0] + "." + Base64.getUrlEncoder().withoutPadding().encodeToString(
                Tokens.claims("/out/secret", "read").build().toString().getBytes(StandardCharsets.UTF_8)) + "." + parts[2];
        assertRefused(upgrade("/out/secret", forged), 401, "bad signature");

        Instant past = Instant.ofEpochSecond(Instant.now().getEpochSecond() - 10);
        assertRefused(upgrade("/out/cam", Tokens.hs256("/out/cam", "read", b -> b.expirationTime(Date.from(past)))), 401,
                "token expired at " + past);
        Instant future = Instant.ofEpochSecond(Instant.now().getEpochSecond() + 60);
        assertRefused(upgrade("/out/cam", Tokens.hs256("/out/cam", "read", b -> b.notBeforeTime(Date.from(future)))), 401,
                "token not valid before " + future);
        assertRefused(upgrade("/out/cam", Tokens.hs256("/out/cam", "read", b -> b.expirationTime(null))), 401,
                "token has no exp (expiry) claim");
        assertRefused(upgrade("/out/cam", Tokens.hs256("/out/cam", "read", b -> b.audience((String) null))), 401,
                "token has no aud (audience) claim (expected: wss://relay.test)");
        assertRefused(upgrade("/out/cam", Tokens.hs256("/out/cam", "read", b -> b.audience("wss://other.relay"))), 401,
                "token audience does not name this relay (expected: wss://relay.test)");
        assertRefused(upgrade("/out/cam", Tokens.hs256("/out/cam", "read", b -> b.audience(Tokens.AUDIENCE + ".evil"))), 401,
                "token audience does not name this relay (expected: wss://relay.test)");
        assertEquals(0, relay.server().connections());
        assertEquals(13, relay.server().access().refusedUnauthenticated());
    }

    @Test
    void aValidTokenForAnotherRouteOrScopeIs403() throws Exception {
        String inA = Tokens.hs256("/in/a", "read write");
        assertRefused(upgrade("/out/a", inA), 403, "token is for /in/a, not /out/a");
        assertRefused(upgrade("/in/b", inA), 403, "token is for /in/a, not /in/b");
        assertTrue(upgrade("/out/a", inA).contains("error=\"insufficient_scope\""));

        assertRefused(upgrade("/in/a", Tokens.hs256("/in/a", "read")), 403, "token does not grant write on /in/a");
        assertRefused(upgrade("/out/a", Tokens.hs256("/out/a", "write")), 403, "token does not grant read on /out/a");
        assertRefused(upgrade("/lab", Tokens.hs256("/lab", null)), 403, "token grants neither read nor write on /lab");
        assertRefused(upgrade("/lab", Tokens.hs256(null, "read")), 403,
                "token names no topic (expected: a topic claim, a grants claim, or aud = wss://relay.test<path>)");
        // The topic claim is compared after the relay's own normalisation.
        try (JdkClient c = JdkClient.connectWithToken(relay.ws("/in/a"), Tokens.hs256("/in//a/", "write"))) {
            awaitMembers(1);
            assertFalse(c.closeCode.isDone());
        }
    }

    @Test
    void readOnlyOnManyToManyReceivesButItsSendsAreDroppedAndCounted() throws Exception {
        try (JdkClient reader = JdkClient.connectWithToken(relay.ws("/lab/chat"), Tokens.hs256("/lab/chat", "read"));
             JdkClient writer = JdkClient.connectWithToken(relay.ws("/lab/chat"), Tokens.hs256("/lab/chat", "read write"));
             JdkClient writeOnly = JdkClient.connectWithToken(relay.ws("/lab/chat"), Tokens.hs256("/lab/chat", "write"))) {
            awaitMembers(3);
            writer.sendText("from writer");
            assertEquals("from writer", reader.take().string());
            reader.sendText("from reader");
            writeOnly.sendText("from write-only");
            assertEquals("from write-only", reader.take().string());
            assertEquals("from write-only", writer.take().string());
            assertNull(writer.poll(QUIET), "a read-only member's message must not be relayed");
            assertNull(writeOnly.poll(QUIET), "a write-only member receives nothing");
            Topic topic = relay.server().topics().topics().iterator().next();
            assertEquals(1, topic.totals()[5], "the read-only member's send is counted as refused");
        }
    }

    @Test
    void originalCrossbarTokensNameTheRouteInTheAudience() throws Exception {
        String original = Tokens.hs256(null, null, b -> b.audience(Tokens.AUDIENCE + "/in/cam"));
        try (JdkClient pub = JdkClient.connectWithToken(relay.ws("/in/cam"), original);
             JdkClient sub = JdkClient.connectWithToken(relay.ws("/out/cam"),
                     Tokens.hs256(null, null, b -> b.audience(Tokens.AUDIENCE + "/out/cam")))) {
            awaitMembers(2);
            pub.sendBinary(new byte[] {1, 2, 3});
            assertEquals(3, sub.take().data().length);
        }
        assertRefused(upgrade("/out/cam", original), 403, "token is for /in/cam, not /out/cam");
    }

    @Test
    void expiryMidStreamClosesWith1008AtExp() throws Exception {
        long expSeconds = Instant.now().getEpochSecond() + 3;
        String shortLived = Tokens.hs256("/out/live", "read", b -> b.expirationTime(new Date(expSeconds * 1000)));
        try (JdkClient pub = JdkClient.connectWithToken(relay.ws("/in/live"), Tokens.hs256("/in/live", "write"));
             JdkClient expiring = JdkClient.connectWithToken(relay.ws("/out/live"), shortLived);
             JdkClient lasting = JdkClient.connectWithToken(relay.ws("/out/live"), Tokens.hs256("/out/live", "read"))) {
            awaitMembers(3);
            AtomicLong closedAt = new AtomicLong();
            expiring.closeCode.whenComplete((c, t) -> closedAt.set(System.currentTimeMillis()));
            int sent = 0;
            while (System.currentTimeMillis() < expSeconds * 1000 + 1500) {
                pub.sendText("m" + sent++);
                Thread.sleep(20);
            }
            assertEquals(1008, expiring.awaitClose(Duration.ofSeconds(10)));
            assertEquals("token expired", expiring.closeReason.orTimeout(10, java.util.concurrent.TimeUnit.SECONDS).join());
            long late = closedAt.get() - expSeconds * 1000;
            // Never before exp; after it, promptly by any measure (the check is a timer at exp, but a
            // shared CI machine may be seconds late to run it).
            assertTrue(late >= 0 && late < 10_000, "closed " + late + " ms after exp");
            // The stream went on for the connection whose token is still valid: every message, in order.
            for (int i = 0; i < sent; i++) {
                assertEquals("m" + i, lasting.take().string());
            }
            int before = expiring.pending();
            assertTrue(before > 0 && before < sent, "the expired client got the stream until exp: " + before);
        }
    }

    private HttpResponse<String> revoke(String adminToken, String body) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(relay.http(RevokeEndpoint.PATH))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (adminToken != null) {
            r.header("Authorization", "Bearer " + adminToken);
        }
        return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void revocationByJtiOrSidClosesLiveConnectionsAtOnceAndRefusesTheTokenAfter() throws Exception {
        String admin = Tokens.hs256(null, "admin");
        String shared = Tokens.hs256("/out/cam", "read");
        String session = Tokens.hs256("/out/cam", "read", b -> b.claim("sid", "booking-42"));
        try (JdkClient pub = JdkClient.connectWithToken(relay.ws("/in/cam"), Tokens.hs256("/in/cam", "write"));
             JdkClient a = JdkClient.connectWithToken(relay.ws("/out/cam"), shared);
             NettyClient b = NettyClient.connect(withToken("/out/cam", shared));
             JdkClient bySession = JdkClient.connectWithToken(relay.ws("/out/cam"), session);
             JdkClient other = JdkClient.connectWithToken(relay.ws("/out/cam"), Tokens.hs256("/out/cam", "read"))) {
            awaitMembers(5);
            String jti = com.nimbusds.jwt.SignedJWT.parse(shared).getJWTClaimsSet().getJWTID();
            HttpResponse<String> r = revoke(admin, "{\"jti\":\"" + jti + "\"}");
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(r.body().contains("\"closed\":2"), r.body());
            assertEquals(1008, a.awaitClose(Duration.ofSeconds(10)));
            assertEquals("token revoked", a.closeReason.orTimeout(10, java.util.concurrent.TimeUnit.SECONDS).join());
            NettyClient.CloseInfo bClose = b.awaitClose(Duration.ofSeconds(10));
            assertEquals(1008, bClose.code());
            assertEquals("token revoked", bClose.reason());

            r = revoke(admin, "{\"sid\":\"booking-42\"}");
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(1008, bySession.awaitClose(Duration.ofSeconds(10)));

            pub.sendText("still flowing");
            assertEquals("still flowing", other.take().string());
            assertRefused(upgrade("/out/cam", shared), 401, "token revoked");
            assertRefused(upgrade("/out/cam", Tokens.hs256("/out/cam", "read", c -> c.claim("sid", "booking-42"))), 401,
                    "token revoked");
            assertEquals(3, relay.server().access().endedRevoked());
        }
    }

    @Test
    void theRevokeEndpointNeedsAnAdminTokenAndAJsonBody() throws Exception {
        HttpResponse<String> r = revoke(null, "{\"jti\":\"x\"}");
        assertEquals(401, r.statusCode());
        assertEquals("401 Unauthorized: missing admin token (expected: Authorization: Bearer <jwt> or ?token=<jwt>)\n", r.body());
        r = revoke(Tokens.hs256("/out/cam", "read write"), "{\"jti\":\"x\"}");
        assertEquals(403, r.statusCode());
        assertEquals("403 Forbidden: token lacks the admin scope\n", r.body());
        String admin = Tokens.hs256(null, "admin");
        assertEquals(400, revoke(admin, "not json").statusCode());
        assertEquals(400, revoke(admin, "{}").statusCode());
        assertEquals(400, revoke(admin, "{\"jti\":42}").statusCode());
        HttpResponse<String> get = http.send(HttpRequest.newBuilder(relay.http(RevokeEndpoint.PATH))
                .header("Authorization", "Bearer " + admin).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(405, get.statusCode());
        r = revoke(admin, "{\"jti\":\"unknown\",\"exp\":" + (Instant.now().getEpochSecond() + 120) + "}");
        assertEquals(200, r.statusCode());
        assertTrue(r.body().contains("\"closed\":0"), r.body());
    }

    @Test
    void aFloodOfBadTokensDoesNotDisturbAnAuthorisedStream() throws Exception {
        int badHandshakes = 300;
        try (NettyClient pub = NettyClient.connect(withToken("/in/flood", Tokens.hs256("/in/flood", "write")));
             JdkClient sub = JdkClient.connectWithToken(relay.ws("/out/flood"), Tokens.hs256("/out/flood", "read"))) {
            awaitMembers(2);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            String[] bad = {"garbage",
                    Tokens.hs256WithSecret(Tokens.claims("/out/flood", "read").build(), "wrong-secret-0123456789abcdefghij"),
                    Tokens.none(Tokens.claims("/out/flood", "read").build()), Tokens.hs256("/out/other", "read")};
            List<Future<String>> attacks = new ArrayList<>();
            for (int i = 0; i < badHandshakes; i++) {
                String token = bad[i % bad.length];
                attacks.add(pool.submit(() -> upgrade("/out/flood", token)));
            }
            // A paced stream (about 1000 messages a second, like a camera's packets) that runs for as long
            // as the flood does, and for at least 500 messages.
            CompletableFuture<Integer> sending = CompletableFuture.supplyAsync(() -> {
                int n = 0;
                while (n < 500 || !attacks.stream().allMatch(Future::isDone)) {
                    pub.sendText("seq " + n++);
                    LockSupport.parkNanos(1_000_000);
                }
                return n;
            });
            int refused = 0;
            for (Future<String> f : attacks) {
                String resp = f.get(60, java.util.concurrent.TimeUnit.SECONDS);
                if (resp.startsWith("HTTP/1.1 401") || resp.startsWith("HTTP/1.1 403")) {
                    refused++;
                }
            }
            pool.shutdown();
            int sent = sending.get(60, java.util.concurrent.TimeUnit.SECONDS);
            for (int i = 0; i < sent; i++) {
                assertEquals("seq " + i, sub.take(Duration.ofSeconds(10)).string());
            }
            assertEquals(badHandshakes, refused);
            assertNull(sub.poll(QUIET));
            assertEquals(0, relay.server().topics().topics().stream().mapToLong(t -> t.totals()[4]).sum(), "nothing dropped");
        }
    }
}
