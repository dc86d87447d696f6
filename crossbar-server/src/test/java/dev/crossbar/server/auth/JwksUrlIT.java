package dev.crossbar.server.auth;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jwt.JWTClaimsSet;
import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.VerificationKeys;
import dev.crossbar.server.testing.KeyProvider;
import dev.crossbar.server.testing.PrometheusText;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.Tokens;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --auth-jwks-url} against a real HTTPS key set endpoint that rotates its keys: a new key
 * is taken up when a token first names it, an old one stops working once the provider drops it,
 * and while the provider is down the last good set stays in force.
 */
class JwksUrlIT {

    @TempDir
    Path dir;

    private static final KeyPair FIRST = Tokens.ecKeyPair();
    private static final KeyPair NEXT = freshEc();

    private static KeyPair freshEc() {
        try {
            java.security.KeyPairGenerator g = java.security.KeyPairGenerator.getInstance("EC");
            g.initialize(new java.security.spec.ECGenParameterSpec("secp256r1"));
            return g.generateKeyPair();
        } catch (java.security.GeneralSecurityException e) {
            throw new AssertionError(e);
        }
    }

    private static CrossbarServer start(KeyProvider idp) {
        return CrossbarServer.start(ServerConfig.builder().listen("127.0.0.1:0").eventLoops(1)
                .shutdownGrace(Duration.ofSeconds(1))
                .auth(AuthConfig.builder().keys(VerificationKeys.remoteJwks(idp.url())).jwksCa(idp.caFile())
                        .audience(Tokens.AUDIENCE).build()).build());
    }

    private static String token(KeyPair keys, String kid) {
        JWTClaimsSet claims = Tokens.claims("/lab/p", "read write").build();
        return Tokens.es256(keys, kid, claims);
    }

    private static String upgrade(CrossbarServer server, String token) throws Exception {
        try (RawClient c = new RawClient(server.port())) {
            return c.upgrade("/lab/p", "Authorization: Bearer " + token);
        }
    }

    @Test
    void keysRotateWithoutARestartAndTheLastGoodSetOutlivesAnOutage() throws Exception {
        try (KeyProvider idp = new KeyProvider(dir)) {
            idp.publish(KeyProvider.jwk(FIRST, "k1"));
            try (CrossbarServer server = start(idp)) {
                assertTrue(upgrade(server, token(FIRST, "k1")).startsWith("HTTP/1.1 101"));

                // The provider publishes its next key beside the first; a token signed with it is
                // refused at most until the relay has fetched the set again, which it does at once.
                idp.publish(KeyProvider.jwk(FIRST, "k1"), KeyProvider.jwk(NEXT, "k2"));
                String next = token(NEXT, "k2");
                await("the new key taken up", Duration.ofSeconds(10), () -> {
                    try {
                        return upgrade(server, next).startsWith("HTTP/1.1 101");
                    } catch (Exception e) {
                        return false;
                    }
                });
                // Both keys work during the rotation.
                assertTrue(upgrade(server, token(FIRST, "k1")).startsWith("HTTP/1.1 101"));

                // The provider goes down: the refresh fails, the last good set stays, and /metrics says so.
                idp.down(true);
                server.access().remoteKeys().refresh();
                PrometheusText m = PrometheusText.parse(server.metrics().scrape());
                assertEquals(1, m.value("crossbar_auth_jwks_refreshes_total", "result", "failed"));
                assertEquals(2, m.value("crossbar_auth_jwks_keys"));
                assertTrue(upgrade(server, next).startsWith("HTTP/1.1 101"));

                // Back up, the first key retired: tokens signed with it are refused from the next fetch.
                idp.down(false);
                idp.publish(KeyProvider.jwk(NEXT, "k2"));
                server.access().remoteKeys().refresh();
                String retired = upgrade(server, token(FIRST, "k1"));
                assertTrue(retired.startsWith("HTTP/1.1 401"), retired);
                assertTrue(upgrade(server, next).startsWith("HTTP/1.1 101"));
            }
        }
    }

    @Test
    void aFloodOfUnknownKidsFetchesAtMostOnceInTheWait() throws Exception {
        try (KeyProvider idp = new KeyProvider(dir)) {
            idp.publish(KeyProvider.jwk(FIRST, "k1"));
            try (CrossbarServer server = start(idp)) {
                int before = idp.fetches();
                for (int i = 0; i < 20; i++) {
                    String refused = upgrade(server, token(NEXT, "forged-" + i));
                    assertTrue(refused.startsWith("HTTP/1.1 401"), refused);
                }
                await("the one fetch done", Duration.ofSeconds(5), () -> idp.fetches() == before + 1);
                Thread.sleep(500);
                assertEquals(before + 1, idp.fetches(), "fetches caused by unknown kids");
            }
        }
    }

    @Test
    void aProviderThatCannotBeReachedAtStartIsAStartError() throws Exception {
        try (KeyProvider idp = new KeyProvider(dir)) {
            idp.down(true);
            CrossbarServer.StartException e = assertThrows(CrossbarServer.StartException.class, () -> start(idp));
            assertTrue(e.getMessage().contains("--auth-jwks-url: cannot fetch the keys from " + idp.url()), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> VerificationKeys.remoteJwks(java.net.URI.create("http://idp/jwks")));
    }
}
