package dev.crossbar.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.VerificationKeys;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.Tokens;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code --stats-require-admin}: the statistics paths need an admin token, however the path is
 * spelled and whether or not the request is an upgrade; other reserved paths stay open.
 */
class AdminPathsIT {

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.auth(AuthConfig.builder()
            .keys(VerificationKeys.hmac(Tokens.SECRET.getBytes(StandardCharsets.UTF_8)))
            .audience(Tokens.AUDIENCE)
            .adminPaths(AuthConfig.STATS_PATHS)
            .build()));

    private String get(String path, Map<String, String> headers) throws Exception {
        StringBuilder req = new StringBuilder("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        headers.forEach((k, v) -> req.append(k).append(": ").append(v).append("\r\n"));
        return HttpExchange.exchange(relay.port(), req.append("\r\n").toString().getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void statisticsPathsNeedAnAdminToken() throws Exception {
        for (String path : new String[] {"/stats", "/metrics", "/ws", "/stats/", "//metrics", "/metrics?x=1"}) {
            String r = get(path, Map.of());
            assertTrue(r.startsWith("HTTP/1.1 401 Unauthorized\r\n"), path + ": " + r);
            assertEquals("401 Unauthorized: missing admin token (expected: Authorization: Bearer <jwt> or ?token=<jwt>)\n",
                    HttpExchange.body(r), path);
        }
        String upgrade = HttpExchange.upgrade(relay.port(), "/ws", Map.of());
        assertTrue(upgrade.startsWith("HTTP/1.1 401"), upgrade);

        String notAdmin = get("/stats", Map.of("Authorization", "Bearer " + Tokens.hs256("/out/cam", "read write")));
        assertTrue(notAdmin.startsWith("HTTP/1.1 403 Forbidden\r\n"), notAdmin);
        assertEquals("403 Forbidden: token lacks the admin scope\n", HttpExchange.body(notAdmin));

        // With an admin token the request goes on to the endpoint.
        String admin = Tokens.hs256(null, "admin");
        String metrics = get("/metrics", Map.of("Authorization", "Bearer " + admin));
        assertTrue(metrics.startsWith("HTTP/1.1 200 OK"), metrics);
        assertTrue(HttpExchange.body(metrics).contains("crossbar_"), metrics);
        assertTrue(get("/metrics?token=" + URLEncoder.encode(admin, StandardCharsets.UTF_8), Map.of())
                .startsWith("HTTP/1.1 200 OK"));
        assertTrue(get("/healthz", Map.of()).startsWith("HTTP/1.1 200 OK"));
    }

    @Test
    void aPipelinedSecondRequestIsCheckedToo() throws Exception {
        String two = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /stats HTTP/1.1\r\nHost: x\r\n\r\n";
        String r = HttpExchange.exchange(relay.port(), two.getBytes(StandardCharsets.US_ASCII));
        assertTrue(r.startsWith("HTTP/1.1 200 OK"), r);
        assertTrue(!r.contains("HTTP/1.1 426") && !r.contains("HTTP/1.1 404"), r);
    }
}
