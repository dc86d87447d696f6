package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jwt.JWTClaimsSet;
import dev.crossbar.server.cluster.NatsAdminLink;
import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.VerificationKeys;
import dev.crossbar.server.testing.CrossbarCluster;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.KeyProvider;
import dev.crossbar.server.testing.NatsCluster;
import dev.crossbar.server.testing.Tokens;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tokens across a three-node cluster behind real {@code nats-server}s: every kind of bad token is
 * refused by every node; a revocation made on one node closes the token's connections on every
 * node within moments and is refused by a node restarted after it (JetStream); without JetStream
 * the relay says so and still reaches the nodes that are up; a disconnect by {@code sub} reaches
 * every node.
 */
class ClusterRevocationIT {

    private static final KeyPair SIGNING = ec();
    private static final KeyPair FORGER = ec();

    @TempDir
    Path dir;

    private static KeyPair ec() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"));
            return g.generateKeyPair();
        } catch (java.security.GeneralSecurityException e) {
            throw new AssertionError(e);
        }
    }

    private static AuthConfig auth() {
        return AuthConfig.builder().keys(VerificationKeys.jwks(new JWKSet(KeyProvider.jwk(SIGNING, "k1"))))
                .audience(Tokens.AUDIENCE).build();
    }

    private static String token(String sub, String jti) {
        return Tokens.es256(SIGNING, "k1", Tokens.claims("/lab/p3/chat", "read write").subject(sub).jwtID(jti).build());
    }

    private static String head(CrossbarCluster c, int node, String token) throws Exception {
        Map<String, String> h = Map.of("Authorization", "Bearer " + token);
        String head = HttpExchange.upgradeHead(c.node(node).port(), "/lab/p3/chat", h);
        return head.startsWith("HTTP/1.1 101") ? head : HttpExchange.upgrade(c.node(node).port(), "/lab/p3/chat", h);
    }

    private static String post(CrossbarCluster c, int node, String path, String body) throws Exception {
        String admin = Tokens.es256(SIGNING, "k1", Tokens.claims(null, "admin").build());
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        return HttpExchange.exchange(c.node(node).port(), ("POST " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                + admin + "\r\nContent-Length: " + b.length + "\r\nConnection: close\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void everyNodeRefusesEveryBadTokenAndARevocationReachesEveryNodeAndOutlivesARestart() throws Exception {
        NatsCluster nats = NatsCluster.start(dir, CrossbarCluster.NODES, true);
        try (CrossbarCluster c = CrossbarCluster.start(nats, (i, b) -> b.auth(auth()), (i, n) -> n)) {
            JWTClaimsSet.Builder ok = Tokens.claims("/lab/p3/chat", "read write");
            Map<String, String> bad = new LinkedHashMap<>();
            bad.put("forged", Tokens.es256(FORGER, "k1", ok.build()));
            bad.put("expired", Tokens.es256(SIGNING, "k1", Tokens.claims("/lab/p3/chat", "read write")
                    .expirationTime(Date.from(Instant.now().minusSeconds(3600))).build()));
            bad.put("wrong audience", Tokens.es256(SIGNING, "k1", Tokens.claims("/lab/p3/chat", "read write")
                    .audience("wss://another.relay").build()));
            bad.put("wrong kid", Tokens.es256(FORGER, "k9", ok.build()));
            for (int node = 0; node < CrossbarCluster.NODES; node++) {
                for (Map.Entry<String, String> t : bad.entrySet()) {
                    String answer = head(c, node, t.getValue());
                    assertTrue(answer.startsWith("HTTP/1.1 401"), CrossbarCluster.name(node) + ", " + t.getKey() + ": " + answer);
                }
            }
            // The same student on every node (the load balancer spread its tabs), and another student.
            String student = token("student-42", "jti-42");
            JdkClient[] tabs = new JdkClient[CrossbarCluster.NODES];
            for (int node = 0; node < CrossbarCluster.NODES; node++) {
                tabs[node] = JdkClient.connectWithToken(c.ws(node, "/lab/p3/chat"), student);
            }
            try (JdkClient other = JdkClient.connectWithToken(c.ws(2, "/lab/p3/chat"), token("student-7", "jti-7"))) {
                await("connected", Duration.ofSeconds(10), () -> c.node(0).connections() == 1
                        && c.node(1).connections() == 1 && c.node(2).connections() == 2);
                await("the revocation bucket up on every node", Duration.ofSeconds(30), () -> {
                    for (int node = 0; node < CrossbarCluster.NODES; node++) {
                        if (!c.node(node).access().store().describe().equals("JetStream bucket " + NatsAdminLink.BUCKET)) {
                            return false;
                        }
                    }
                    return true;
                });
                String answer = post(c, 0, "/admin/revoke", "{\"jti\":\"jti-42\"}");
                assertTrue(answer.startsWith("HTTP/1.1 200") && answer.contains("JetStream bucket"), answer);
                for (int node = 0; node < CrossbarCluster.NODES; node++) {
                    assertEquals(1008, tabs[node].awaitClose(Duration.ofSeconds(5)), CrossbarCluster.name(node));
                    assertEquals("token revoked", tabs[node].closeReason.join());
                }
                for (int node = 0; node < CrossbarCluster.NODES; node++) {
                    String refused = head(c, node, student);
                    assertTrue(refused.startsWith("HTTP/1.1 401") && refused.contains("token revoked"), refused);
                }
                other.sendText("still here");
                // A node restarted after the revocation reads it from the bucket.
                c.stop(1);
                c.restart(1);
                await("node-b refuses the revoked token after its restart", Duration.ofSeconds(10), () -> {
                    try {
                        return head(c, 1, student).startsWith("HTTP/1.1 401");
                    } catch (Exception e) {
                        return false;
                    }
                });
                assertTrue(head(c, 1, token("student-7", "jti-7b")).startsWith("HTTP/1.1 101"));

                // A disconnect by sub on node a reaches node c.
                String d = post(c, 0, "/admin/disconnect", "{\"sub\":\"student-7\"}");
                assertTrue(d.startsWith("HTTP/1.1 200"), d);
                assertEquals(1008, other.awaitClose(Duration.ofSeconds(5)));
                assertEquals("disconnected by the administrator", other.closeReason.join());
            } finally {
                for (JdkClient t : tabs) {
                    if (t != null) {
                        t.close();
                    }
                }
            }
        }
    }

    @Test
    void withoutJetStreamRevocationsStillReachTheNodesThatAreUpAndTheRelaySaysSo() throws Exception {
        NatsCluster nats = NatsCluster.start(dir, CrossbarCluster.NODES, false);
        try (CrossbarCluster c = CrossbarCluster.start(nats, (i, b) -> b.auth(auth()), (i, n) -> n)) {
            await("the fallback known", Duration.ofSeconds(30), () ->
                    c.node(0).access().store().describe().startsWith("NATS (no JetStream")
                            && c.node(2).access().store().describe().startsWith("NATS (no JetStream"));
            String student = token("student-42", "jti-42");
            try (JdkClient tab = JdkClient.connectWithToken(c.ws(2, "/lab/p3/chat"), student)) {
                await("connected", Duration.ofSeconds(10), () -> c.node(2).connections() == 1);
                String answer = post(c, 0, "/admin/revoke", "{\"jti\":\"jti-42\"}");
                assertTrue(answer.startsWith("HTTP/1.1 200") && answer.contains("no JetStream"), answer);
                assertEquals(1008, tab.awaitClose(Duration.ofSeconds(5)));
                assertTrue(head(c, 2, student).startsWith("HTTP/1.1 401"));
            }
        }
    }
}
