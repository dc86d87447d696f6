package dev.crossbar.server.testing;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.ECPrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.Date;
import java.util.UUID;
import java.util.function.UnaryOperator;

/**
 * Mints tokens in tests, with nimbus-jose-jwt as an issuer would: HS256 with a secret, RS256 and
 * ES256 with generated key pairs, and the malformed kinds a relay must refuse.
 */
public final class Tokens {

    /** A 32-byte secret, the shortest HS256 allows. */
    public static final String SECRET = "test-secret-0123456789abcdefghij";
    public static final String AUDIENCE = "wss://relay.test";

    private Tokens() {
    }

    /** Claims for {@code topic} with {@code scope}, a fresh jti, expiring in an hour. */
    public static JWTClaimsSet.Builder claims(String topic, String scope) {
        Instant now = Instant.now();
        JWTClaimsSet.Builder b = new JWTClaimsSet.Builder()
                .audience(AUDIENCE)
                .jwtID(UUID.randomUUID().toString())
                .issueTime(Date.from(now))
                .expirationTime(Date.from(now.plusSeconds(3600)));
        if (topic != null) {
            b.claim("topic", topic);
        }
        if (scope != null) {
            b.claim("scope", scope);
        }
        return b;
    }

    public static String hs256(JWTClaimsSet claims) {
        return hs256WithSecret(claims, SECRET);
    }

    public static String hs256WithSecret(JWTClaimsSet claims, String secret) {
        try {
            return sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)), JWSAlgorithm.HS256, null, claims);
        } catch (JOSEException e) {
            throw new AssertionError(e);
        }
    }

    /** HS256 for {@code topic} with {@code scope}, expiring in an hour, with the claims adjusted. */
    public static String hs256(String topic, String scope, UnaryOperator<JWTClaimsSet.Builder> adjust) {
        return hs256(adjust.apply(claims(topic, scope)).build());
    }

    public static String hs256(String topic, String scope) {
        return hs256(topic, scope, b -> b);
    }

    public static String rs256(KeyPair rsa, String kid, JWTClaimsSet claims) {
        return sign(new RSASSASigner(rsa.getPrivate()), JWSAlgorithm.RS256, kid, claims);
    }

    public static String es256(KeyPair ec, String kid, JWTClaimsSet claims) {
        try {
            return sign(new ECDSASigner((ECPrivateKey) ec.getPrivate()), JWSAlgorithm.ES256, kid, claims);
        } catch (JOSEException e) {
            throw new AssertionError(e);
        }
    }

    /** An unsigned token: {@code {"alg":"none"}}. */
    public static String none(JWTClaimsSet claims) {
        return new PlainJWT(claims).serialize();
    }

    private static String sign(JWSSigner signer, JWSAlgorithm alg, String kid, JWTClaimsSet claims) {
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(alg).keyID(kid).build(), claims);
        try {
            jwt.sign(signer);
        } catch (JOSEException e) {
            throw new AssertionError(e);
        }
        return jwt.serialize();
    }

    /** One RSA-2048 key pair per test JVM: making one takes seconds on a small machine. */
    public static KeyPair rsaKeyPair() {
        return RsaHolder.KEYS;
    }

    /** A second RSA key pair, for "signed by someone else". */
    public static KeyPair otherRsaKeyPair() {
        return OtherRsaHolder.KEYS;
    }

    private static final class OtherRsaHolder {
        static final KeyPair KEYS = RsaHolder.newRsa();
    }

    private static final class RsaHolder {
        static final KeyPair KEYS = newRsa();

        private static KeyPair newRsa() {
            try {
                KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
                g.initialize(2048);
                return g.generateKeyPair();
            } catch (java.security.GeneralSecurityException e) {
                throw new AssertionError(e);
            }
        }
    }

    public static KeyPair ecKeyPair() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"));
            return g.generateKeyPair();
        } catch (java.security.GeneralSecurityException e) {
            throw new AssertionError(e);
        }
    }
}
