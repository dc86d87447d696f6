package dev.crossbar.server.pair;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.VerificationKeys;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.SessionHost;
import dev.crossbar.server.testing.Tokens;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * With access control on, scopes decide who may host ({@code host} on {@code /in/<t>}) and who may
 * connect ({@code read} and {@code write} on {@code /out/<t>}); the session path needs no token.
 */
class SessionAccessIT {

    static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .routing(new RoutingTable(RoutingTable.parseAll(List.of("/shell/*:schema=session"))))
            .auth(AuthConfig.builder()
                    .keys(VerificationKeys.hmac(Tokens.SECRET.getBytes(StandardCharsets.UTF_8)))
                    .audience(Tokens.AUDIENCE)
                    .clockSkew(Duration.ZERO)
                    .build()));

    private String upgrade(String path, String token) throws Exception {
        return HttpExchange.upgrade(relay.port(), path, Map.of("Authorization", "Bearer " + token));
    }

    @Test
    void hostingNeedsTheHostScope() throws Exception {
        String r = upgrade("/in/shell/a", Tokens.hs256("/in/shell/a", "read write"));
        assertTrue(r.startsWith("HTTP/1.1 403"), r);
        assertTrue(r.contains("token does not grant host on /in/shell/a"), r);
    }

    @Test
    void connectingNeedsReadAndWrite() throws Exception {
        String r = upgrade("/out/shell/a", Tokens.hs256("/out/shell/a", "read"));
        assertTrue(r.startsWith("HTTP/1.1 403"), r);
        assertTrue(r.contains("token does not grant read and write on /out/shell/a (a session goes both ways)"), r);
    }

    @Test
    void aClientWhoseTokenExpiresEndsItsSessionWithTheSameCodeOnTheHostsSide() throws Exception {
        try (SessionHost host = new SessionHost(relay.ws("/in/shell/a"), URI.create("ws://127.0.0.1:" + relay.port()),
                true, Map.of("Authorization", "Bearer " + Tokens.hs256("/in/shell/a", "host")))) {
            RelayServerExtension.await("host", WAIT, () -> relay.server().pairs().hosts() == 1);
            String shortLived = Tokens.hs256("/out/shell/a", "read write",
                    c -> c.expirationTime(new java.util.Date(System.currentTimeMillis() + 2000)));
            try (JdkClient client = JdkClient.connectWithToken(relay.ws("/out/shell/a"), shortLived)) {
                SessionHost.Opened s = host.awaitSession(0, WAIT);
                assertEquals(1008, client.awaitClose(WAIT));
                assertEquals("token expired", client.closeReason.join());
                assertEquals(1008, s.awaitCloseCode(WAIT));
                assertEquals("token expired", s.closeReason());
            }
        }
    }

    @Test
    void aHostWithTheScopeServesAClientWithReadAndWrite() throws Exception {
        try (SessionHost host = new SessionHost(relay.ws("/in/shell/a"), URI.create("ws://127.0.0.1:" + relay.port()),
                true, Map.of("Authorization", "Bearer " + Tokens.hs256("/in/shell/a", "host")))) {
            RelayServerExtension.await("host", WAIT, () -> relay.server().pairs().hosts() == 1);
            try (JdkClient client = JdkClient.connectWithToken(relay.ws("/out/shell/a"),
                    Tokens.hs256("/out/shell/a", "read write"))) {
                host.awaitSession(0, WAIT);
                client.sendText("whoami");
                assertEquals("whoami", client.take(WAIT).string());
            }
        }
    }
}
