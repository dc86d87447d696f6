package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.BadJWSException;
import com.nimbusds.jose.proc.JWSKeySelector;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jose.proc.SingleKeyJWSKeySelector;
import com.nimbusds.jwt.EncryptedJWT;
import com.nimbusds.jwt.JWT;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.JWTParser;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.BadJWTException;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import com.nimbusds.jwt.proc.JWTClaimsSetVerifier;
import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.VerificationKeys;
import java.text.ParseException;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import javax.crypto.spec.SecretKeySpec;

/**
 * Checks a token's form, algorithm, signature, audience and time window with nimbus-jose-jwt, and
 * returns its claims. Route and scope are for {@link AccessControl}; this says only "a token this
 * relay issued trust in, valid now".
 *
 * <p>Refused, each with its own reason (401): not a JWT; {@code alg: none}; an encrypted token; an
 * algorithm other than the configured key's (algorithm confusion); a bad signature; no {@code exp};
 * {@code exp} past or {@code nbf} to come, beyond the clock skew; an {@code aud} that does not name
 * this relay. Thread-safe: one instance serves every event loop.
 */
public final class TokenVerifier {

    /** Longest token accepted, in characters; real tokens are a few hundred. */
    public static final int MAX_TOKEN_CHARS = 8 * 1024;

    private final String audience;
    private final long skewMillis;
    private final LongSupplier clock;
    private final List<JWSAlgorithm> algorithms;
    private final String expectedAlgorithms;
    private final DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();

    public TokenVerifier(AuthConfig config) {
        this(config, null, System::currentTimeMillis);
    }

    /** @param remote the identity provider's keys, for a configuration with {@code --auth-jwks-url} */
    TokenVerifier(AuthConfig config, RemoteJwks remote) {
        this(config, remote, System::currentTimeMillis);
    }

    TokenVerifier(AuthConfig config, LongSupplier clock) {
        this(config, null, clock);
    }

    private TokenVerifier(AuthConfig config, RemoteJwks remote, LongSupplier clock) {
        requireNonNull(config, "config");
        if (!config.enabled()) {
            throw new IllegalArgumentException("config: access control is off (expected: keys configured)");
        }
        this.audience = config.audience();
        this.skewMillis = config.clockSkew().toMillis();
        this.clock = requireNonNull(clock, "clock");
        VerificationKeys keys = config.keys();
        this.algorithms = List.copyOf(keys.algorithms());
        this.expectedAlgorithms = algorithms.stream().map(JWSAlgorithm::getName).sorted().collect(Collectors.joining(" or "));
        if (keys.jwksUrl() != null) {
            processor.setJWSKeySelector(new JWSVerificationKeySelector<>(keys.algorithms(),
                    requireNonNull(remote, "remote keys for " + keys.jwksUrl())));
        } else {
            processor.setJWSKeySelector(keySelector(keys));
        }
        processor.setJWTClaimsSetVerifier(new TimeAndAudience());
    }

    private static JWSKeySelector<SecurityContext> keySelector(VerificationKeys keys) {
        if (keys.secret() != null) {
            return new SingleKeyJWSKeySelector<>(JWSAlgorithm.HS256, new SecretKeySpec(keys.secret(), "HmacSHA256"));
        }
        if (keys.publicKey() != null) {
            return new SingleKeyJWSKeySelector<>(keys.algorithms().iterator().next(), keys.publicKey());
        }
        return new JWSVerificationKeySelector<>(keys.algorithms(), new ImmutableJWKSet<>(keys.jwks()));
    }

    /** This relay's audience, without a trailing slash. */
    public String audience() {
        return audience;
    }

    /** Allowed clock skew in milliseconds; a grant lasts until {@code exp} plus this. */
    public long skewMillis() {
        return skewMillis;
    }

    /**
     * Verifies {@code token} (compact serialisation, surrounding white space ignored).
     *
     * @throws AccessDenied (401) saying why it is not accepted
     */
    public JWTClaimsSet verify(String token) throws AccessDenied {
        if (token == null || token.isBlank()) {
            throw AccessDenied.unauthenticated("missing token");
        }
        String t = token.strip();
        if (t.length() > MAX_TOKEN_CHARS) {
            throw AccessDenied.unauthenticated("token too long: " + t.length() + " characters (expected: <= " + MAX_TOKEN_CHARS + ")");
        }
        JWT jwt;
        try {
            jwt = JWTParser.parse(t);
        } catch (ParseException e) {
            throw AccessDenied.unauthenticated("malformed token: not a JSON Web Token");
        }
        if (jwt instanceof PlainJWT) {
            throw AccessDenied.unauthenticated("unsigned token (alg none) refused");
        }
        if (jwt instanceof EncryptedJWT || !(jwt instanceof SignedJWT signed)) {
            throw AccessDenied.unauthenticated("encrypted tokens are not supported (expected: a signed JWT)");
        }
        JWSAlgorithm alg = signed.getHeader().getAlgorithm();
        if (!algorithms.contains(alg)) {
            throw AccessDenied.unauthenticated("algorithm " + alg.getName() + " not accepted (expected: " + expectedAlgorithms + ")");
        }
        try {
            return processor.process(signed, null);
        } catch (Rejected e) {
            throw AccessDenied.unauthenticated(e.getMessage());
        } catch (BadJWSException e) {
            throw AccessDenied.unauthenticated("bad signature");
        } catch (BadJWTException e) {
            throw AccessDenied.unauthenticated("malformed token claims");
        } catch (BadJOSEException e) {
            // The header passed the algorithm check, so no key matched: a JWKS without its kid, or a bad typ.
            throw AccessDenied.unauthenticated("no key of this relay matches the token (check kid and typ)");
        } catch (JOSEException e) {
            throw AccessDenied.unauthenticated("token could not be verified");
        }
    }

    /** A claim check failed; its message is the reason given to the client. */
    private static final class Rejected extends BadJWTException {
        private static final long serialVersionUID = 1L;

        Rejected(String message) {
            super(message);
        }
    }

    /**
     * The claim checks that need no route: {@code exp} present and not past, {@code nbf} not to come
     * (both with the skew), {@code aud} naming this relay: exactly, or followed by a path as the
     * original crossbar's tokens have it ({@code aud = audience + route}). Runs only after the
     * signature has been verified.
     */
    private final class TimeAndAudience implements JWTClaimsSetVerifier<SecurityContext> {
        @Override
        public void verify(JWTClaimsSet claims, SecurityContext context) throws BadJWTException {
            long now = clock.getAsLong();
            Date exp;
            Date nbf;
            List<String> aud;
            try {
                exp = claims.getDateClaim("exp");
                nbf = claims.getDateClaim("nbf");
            } catch (ParseException e) {
                throw new Rejected("malformed exp or nbf claim (expected: seconds since the epoch)");
            }
            // A string or a list of strings; anything else reads as empty.
            aud = claims.getAudience();
            if (exp == null) {
                throw new Rejected("token has no exp (expiry) claim");
            }
            if (exp.getTime() + skewMillis <= now) {
                throw new Rejected("token expired at " + Instant.ofEpochMilli(exp.getTime()));
            }
            if (nbf != null && nbf.getTime() - skewMillis > now) {
                throw new Rejected("token not valid before " + Instant.ofEpochMilli(nbf.getTime()));
            }
            if (aud.isEmpty()) {
                throw new Rejected("token has no aud (audience) claim (expected: " + audience + ")");
            }
            for (String a : aud) {
                if (a != null && (a.equals(audience) || a.startsWith(audience + "/"))) {
                    return;
                }
            }
            throw new Rejected("token audience does not name this relay (expected: " + audience + ")");
        }
    }
}
