package dev.crossbar.server.config;

import static java.util.Objects.requireNonNull;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.cert.CertificateFactory;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Set;

/**
 * The key that token signatures are checked against, and so the one algorithm family accepted:
 * a shared secret (HS256), an RSA public key (RS256), an EC P-256 public key (ES256), or a JWKS of
 * RSA and P-256 keys (RS256 and ES256, chosen by {@code kid}). Exactly one kind is configured, so
 * an HS256 token can never be checked with an RSA key's bytes as its secret (algorithm confusion).
 *
 * <p>{@link #toString()} never shows a secret.
 */
public final class VerificationKeys {

    /** Shortest shared secret: 256 bits, as RFC 7518 section 3.2 requires for HS256. */
    public static final int MIN_SECRET_BYTES = 32;
    /** Smallest RSA modulus accepted, in bits (NIST SP 800-131A). */
    public static final int MIN_RSA_BITS = 2048;

    private final byte[] secret;
    private final PublicKey publicKey;
    private final JWKSet jwks;
    private final Set<JWSAlgorithm> algorithms;
    private final String description;
    /** The identity provider's key set URL ({@code --auth-jwks-url}), or null. */
    private final java.net.URI jwksUrl;

    private VerificationKeys(byte[] secret, PublicKey publicKey, JWKSet jwks, Set<JWSAlgorithm> algorithms,
                             String description) {
        this.secret = secret;
        this.publicKey = publicKey;
        this.jwks = jwks;
        this.algorithms = algorithms;
        this.description = description;
        this.jwksUrl = null;
    }

    private VerificationKeys(java.net.URI jwksUrl) {
        this.secret = null;
        this.publicKey = null;
        this.jwks = null;
        this.algorithms = Set.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256);
        this.description = "JWKS from " + jwksUrl + ", RS256/ES256";
        this.jwksUrl = jwksUrl;
    }

    /**
     * RS256 and ES256 with the keys an identity provider publishes at {@code url} (HTTPS only: the
     * keys decide who gets in), fetched and refreshed while the relay runs.
     */
    public static VerificationKeys remoteJwks(java.net.URI url) {
        requireNonNull(url, "url");
        if (!"https".equalsIgnoreCase(url.getScheme()) || url.getHost() == null) {
            throw new IllegalArgumentException("auth JWKS URL: '" + url + "' (expected: https://host/path)");
        }
        return new VerificationKeys(url);
    }

    /** The identity provider's key set URL, or null for keys given at start. */
    public java.net.URI jwksUrl() {
        return jwksUrl;
    }

    /** HS256 with {@code secret} (its bytes as given, e.g. the UTF-8 of a passphrase). */
    public static VerificationKeys hmac(byte[] secret) {
        requireNonNull(secret, "secret");
        if (secret.length < MIN_SECRET_BYTES) {
            throw new IllegalArgumentException("auth secret: " + secret.length + " bytes (expected: at least "
                    + MIN_SECRET_BYTES + " bytes, 256 bits, as HS256 requires)");
        }
        return new VerificationKeys(secret.clone(), null, null, Set.of(JWSAlgorithm.HS256), "HS256 shared secret");
    }

    /** RS256 for an RSA key of at least 2048 bits, ES256 for an EC key on P-256. */
    public static VerificationKeys publicKey(PublicKey key) {
        requireNonNull(key, "key");
        if (key instanceof RSAPublicKey rsa) {
            int bits = rsa.getModulus().bitLength();
            if (bits < MIN_RSA_BITS) {
                throw new IllegalArgumentException("auth public key: RSA " + bits + " bits (expected: >= " + MIN_RSA_BITS + ")");
            }
            return new VerificationKeys(null, key, null, Set.of(JWSAlgorithm.RS256), "RS256 public key (RSA " + bits + " bits)");
        }
        if (key instanceof ECPublicKey ec) {
            if (!Curve.P_256.equals(Curve.forECParameterSpec(ec.getParams()))) {
                throw new IllegalArgumentException("auth public key: EC key not on P-256 (expected: a P-256 key for ES256)");
            }
            return new VerificationKeys(null, key, null, Set.of(JWSAlgorithm.ES256), "ES256 public key (P-256)");
        }
        throw new IllegalArgumentException("auth public key: " + key.getAlgorithm() + " (expected: RSA or EC P-256)");
    }

    /** RS256 and ES256 with the RSA and P-256 keys of {@code set}; other keys are ignored, private parts dropped. */
    public static VerificationKeys jwks(JWKSet set) {
        requireNonNull(set, "set");
        List<JWK> usable = new ArrayList<>();
        for (JWK k : set.getKeys()) {
            if (k instanceof RSAKey rsa && rsa.size() >= MIN_RSA_BITS) {
                usable.add(k.toPublicJWK());
            } else if (k instanceof ECKey ec && Curve.P_256.equals(ec.getCurve())) {
                usable.add(k.toPublicJWK());
            }
        }
        if (usable.isEmpty()) {
            throw new IllegalArgumentException("auth JWKS: no usable key (expected: RSA >= " + MIN_RSA_BITS
                    + " bits or EC P-256 keys)");
        }
        return new VerificationKeys(null, null, new JWKSet(usable), Set.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256),
                "JWKS with " + usable.size() + " key(s), RS256/ES256");
    }

    /** Reads a secret file: its bytes, less one trailing newline (as {@code echo secret > file} leaves). */
    public static VerificationKeys readSecretFile(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("auth secret file: cannot read " + file + ": " + e.getMessage());
        }
        int end = bytes.length;
        if (end > 0 && bytes[end - 1] == '\n') {
            end--;
            if (end > 0 && bytes[end - 1] == '\r') {
                end--;
            }
        }
        byte[] secret = Arrays.copyOf(bytes, end);
        Arrays.fill(bytes, (byte) 0);
        return hmac(secret);
    }

    /** Reads a PEM public key ({@code BEGIN PUBLIC KEY}) or certificate ({@code BEGIN CERTIFICATE}). */
    public static VerificationKeys readPublicKeyPem(Path file) {
        String pem;
        try {
            pem = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalArgumentException("auth public key: cannot read " + file + ": " + e.getMessage());
        }
        return publicKey(parsePublicKey(file, pem));
    }

    private static PublicKey parsePublicKey(Path file, String pem) {
        String begin = "-----BEGIN PUBLIC KEY-----";
        String end = "-----END PUBLIC KEY-----";
        try {
            if (pem.contains("-----BEGIN CERTIFICATE-----")) {
                return CertificateFactory.getInstance("X.509")
                        .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))
                        .getPublicKey();
            }
            int b = pem.indexOf(begin);
            int e = pem.indexOf(end);
            if (b < 0 || e < b) {
                throw new IllegalArgumentException("auth public key: " + file
                        + " (expected: PEM with BEGIN PUBLIC KEY or BEGIN CERTIFICATE)");
            }
            X509EncodedKeySpec spec;
            try {
                spec = new X509EncodedKeySpec(Base64.getMimeDecoder().decode(pem.substring(b + begin.length(), e)));
            } catch (IllegalArgumentException notBase64) {
                throw new IllegalArgumentException("auth public key: " + file + " is not valid PEM (" + notBase64.getMessage() + ")");
            }
            for (String alg : List.of("RSA", "EC")) {
                try {
                    return KeyFactory.getInstance(alg).generatePublic(spec);
                } catch (InvalidKeySpecException notThisType) {
                    // try the next key type
                }
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("auth public key: cannot parse " + file + ": " + e.getMessage());
        }
        throw new IllegalArgumentException("auth public key: " + file + " (expected: an RSA or EC public key)");
    }

    /** Reads a JWKS file ({@code {"keys":[...]}}). */
    public static VerificationKeys readJwks(Path file) {
        try {
            return jwks(JWKSet.load(file.toFile()));
        } catch (IOException | java.text.ParseException e) {
            throw new IllegalArgumentException("auth JWKS: cannot read " + file + ": " + e.getMessage());
        }
    }

    /** The signature algorithms tokens may use with these keys. */
    public Set<JWSAlgorithm> algorithms() {
        return algorithms;
    }

    /** The shared secret (a copy), or null if these are public keys. */
    public byte[] secret() {
        return secret == null ? null : secret.clone();
    }

    /** The single public key, or null. */
    public PublicKey publicKey() {
        return publicKey;
    }

    /** The public JWKS, or null. */
    public JWKSet jwks() {
        return jwks;
    }

    /** What kind of key this is, for the start-up log line; never the key itself. */
    @Override
    public String toString() {
        return description;
    }
}
