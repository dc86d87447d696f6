package dev.crossbar.server.auth;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.VerificationKeys;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.Tokens;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tokens signed elsewhere: RS256 against a PEM public key, ES256 and RS256 against a JWKS file, and
 * the confusions a relay must refuse (an HS256 token "signed" with the public key, the other
 * algorithm, an unknown kid).
 */
class PublicKeyTokensIT {

    @TempDir
    Path dir;

    private static CrossbarServer start(VerificationKeys keys) {
        return CrossbarServer.start(ServerConfig.builder()
                .listen("127.0.0.1:0")
                .eventLoops(1)
                .shutdownGrace(Duration.ofSeconds(1))
                .auth(AuthConfig.builder().keys(keys).audience(Tokens.AUDIENCE).build())
                .build());
    }

    private static URI ws(CrossbarServer s, String path) {
        return URI.create("ws://127.0.0.1:" + s.port() + path);
    }

    private static String upgrade(CrossbarServer s, String token) throws Exception {
        return HttpExchange.upgrade(s.port(), "/out/cam", Map.of("Authorization", "Bearer " + token));
    }

    private static void assert401(String response, String reason) {
        assertTrue(response.startsWith("HTTP/1.1 401 Unauthorized\r\n"), response);
        assertEquals("401 Unauthorized: " + reason + "\n", HttpExchange.body(response));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    @Test
    void rs256WithAPemPublicKeyAndNoAlgorithmConfusion() throws Exception {
        KeyPair rsa = Tokens.rsaKeyPair();
        String publicPem = pem("PUBLIC KEY", rsa.getPublic().getEncoded());
        Path file = dir.resolve("issuer.pem");
        Files.writeString(file, publicPem);
        JWTClaimsSet claims = Tokens.claims("/out/cam", "read").build();
        try (CrossbarServer server = start(VerificationKeys.readPublicKeyPem(file))) {
            try (JdkClient ok = JdkClient.connectWithToken(ws(server, "/out/cam"), Tokens.rs256(rsa, null, claims))) {
                await("joined", Duration.ofSeconds(5), () -> server.connections() == 1);
                assertFalse(ok.closeCode.isDone());
            }
            // The classic confusion: HS256 with the (public) key as the HMAC secret.
            assert401(upgrade(server, Tokens.hs256WithSecret(claims, publicPem)), "algorithm HS256 not accepted (expected: RS256)");
            assert401(upgrade(server, Tokens.es256(Tokens.ecKeyPair(), null, claims)), "algorithm ES256 not accepted (expected: RS256)");
            assert401(upgrade(server, Tokens.rs256(Tokens.otherRsaKeyPair(), null, claims)), "bad signature");
            assert401(upgrade(server, Tokens.none(claims)), "unsigned token (alg none) refused");
        }
    }

    @Test
    void es256AndRs256FromAJwksChosenByKid() throws Exception {
        KeyPair ec = Tokens.ecKeyPair();
        KeyPair rsa = Tokens.rsaKeyPair();
        JWKSet set = new JWKSet(List.of(
                new ECKey.Builder(Curve.P_256, (ECPublicKey) ec.getPublic()).keyID("ec-1").build(),
                new RSAKey.Builder((RSAPublicKey) rsa.getPublic()).keyID("rsa-1").build()));
        Path file = dir.resolve("jwks.json");
        Files.writeString(file, set.toString());
        JWTClaimsSet claims = Tokens.claims("/out/cam", "read").build();
        try (CrossbarServer server = start(VerificationKeys.readJwks(file))) {
            try (JdkClient a = JdkClient.connectWithToken(ws(server, "/out/cam"), Tokens.es256(ec, "ec-1", claims));
                 JdkClient b = JdkClient.connectWithToken(ws(server, "/out/cam"), Tokens.rs256(rsa, "rsa-1", claims))) {
                await("joined", Duration.ofSeconds(5), () -> server.connections() == 2);
                assertFalse(a.closeCode.isDone() || b.closeCode.isDone());
            }
            assert401(upgrade(server, Tokens.es256(ec, "unknown", claims)), "no key of this relay matches the token (check kid and typ)");
            assert401(upgrade(server, Tokens.es256(Tokens.ecKeyPair(), "ec-1", claims)), "bad signature");
            assert401(upgrade(server, Tokens.hs256(claims)), "algorithm HS256 not accepted (expected: ES256 or RS256)");
        }
    }

    @Test
    void weakOrWrongKeysAreRefusedAtStartWithTheValue() throws Exception {
        IllegalArgumentException shortSecret = assertThrows(IllegalArgumentException.class,
                () -> VerificationKeys.hmac("too-short".getBytes(StandardCharsets.UTF_8)));
        assertEquals("auth secret: 9 bytes (expected: at least 32 bytes, 256 bits, as HS256 requires)", shortSecret.getMessage());
        Path notPem = dir.resolve("key.txt");
        Files.writeString(notPem, "hello");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> VerificationKeys.readPublicKeyPem(notPem));
        assertTrue(bad.getMessage().contains("expected: PEM with BEGIN PUBLIC KEY or BEGIN CERTIFICATE"), bad.getMessage());
        IllegalArgumentException noAudience = assertThrows(IllegalArgumentException.class,
                () -> AuthConfig.builder().keys(VerificationKeys.hmac(Tokens.SECRET.getBytes(StandardCharsets.UTF_8))).build());
        assertTrue(noAudience.getMessage().startsWith("audience: missing"), noAudience.getMessage());
    }
}
