package dev.crossbar.server.config;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Access control settings, validated when built. Off ({@link #DISABLED}) unless keys are set, as
 * in the original crossbar; with keys, every relay connection needs a token for its route.
 */
public final class AuthConfig {

    /** Tolerated difference between the token issuer's clock and ours, for {@code exp} and {@code nbf}. */
    public static final Duration DEFAULT_CLOCK_SKEW = Duration.ofSeconds(30);
    /** Largest clock skew accepted: more would make {@code exp} meaningless. */
    public static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(10);
    /** Revocations remembered at once; each entry lives until the revoked token would have expired. */
    public static final int DEFAULT_MAX_REVOCATIONS = 10_000;
    /** How long a revocation is kept when the revoked token's expiry is not known. */
    public static final Duration DEFAULT_REVOCATION_TTL = Duration.ofHours(24);
    /** How often the identity provider's key set ({@code --auth-jwks-url}) is fetched again. */
    public static final Duration DEFAULT_JWKS_REFRESH = Duration.ofMinutes(5);
    /** The statistics endpoints that {@code --stats-require-admin} protects (they show who is connected). */
    public static final Set<String> STATS_PATHS = Set.of("/stats", "/ws", "/metrics");

    /** Access control off: no token is asked for. */
    public static final AuthConfig DISABLED = new Builder().build();

    private final VerificationKeys keys;
    private final String audience;
    private final Duration clockSkew;
    private final boolean firstMessage;
    private final Set<String> adminPaths;
    private final int maxRevocations;
    private final Duration revocationTtl;
    private final java.nio.file.Path revocationFile;
    private final Duration jwksRefresh;
    private final java.nio.file.Path jwksCa;

    private AuthConfig(Builder b) {
        this.keys = b.keys;
        this.clockSkew = requireNonNull(b.clockSkew, "clockSkew");
        if (clockSkew.isNegative() || clockSkew.compareTo(MAX_CLOCK_SKEW) > 0 || clockSkew.getNano() != 0) {
            throw new IllegalArgumentException("clockSkew: " + clockSkew + " (expected: whole seconds, 0 to " + MAX_CLOCK_SKEW + ")");
        }
        if (b.maxRevocations <= 0) {
            throw new IllegalArgumentException("maxRevocations: " + b.maxRevocations + " (expected: > 0)");
        }
        this.maxRevocations = b.maxRevocations;
        this.revocationTtl = requireNonNull(b.revocationTtl, "revocationTtl");
        if (revocationTtl.isZero() || revocationTtl.isNegative()) {
            throw new IllegalArgumentException("revocationTtl: " + revocationTtl + " (expected: > 0)");
        }
        this.revocationFile = b.revocationFile;
        this.jwksRefresh = requireNonNull(b.jwksRefresh, "jwksRefresh");
        if (jwksRefresh.compareTo(Duration.ofSeconds(10)) < 0) {
            throw new IllegalArgumentException("jwksRefresh: " + jwksRefresh + " (expected: >= 10s)");
        }
        this.jwksCa = b.jwksCa;
        this.firstMessage = b.firstMessage;
        Set<String> paths = new LinkedHashSet<>();
        for (String p : requireNonNull(b.adminPaths, "adminPaths")) {
            if (!p.startsWith("/") || (p.length() > 1 && p.endsWith("/"))) {
                throw new IllegalArgumentException("adminPaths: '" + p + "' (expected: /name, no trailing slash)");
            }
            paths.add(p);
        }
        this.adminPaths = Set.copyOf(paths);
        if (keys == null) {
            if (firstMessage || !adminPaths.isEmpty() || b.audience != null) {
                throw new IllegalArgumentException("auth: no key configured (expected: --auth-secret, "
                        + "--auth-secret-file, --auth-public-key or --auth-jwks with the other --auth options)");
            }
            this.audience = null;
        } else {
            if (b.audience == null || b.audience.isBlank()) {
                throw new IllegalArgumentException("audience: missing (expected: the relay's public URL, "
                        + "e.g. wss://relay.example.org, as the tokens' aud claim names it)");
            }
            String a = b.audience.trim();
            this.audience = a.endsWith("/") ? a.substring(0, a.length() - 1) : a;
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder(this);
    }

    /** Whether tokens are required. */
    public boolean enabled() {
        return keys != null;
    }

    public VerificationKeys keys() {
        return keys;
    }

    /** This relay's name in the {@code aud} claim, without a trailing slash. */
    public String audience() {
        return audience;
    }

    public Duration clockSkew() {
        return clockSkew;
    }

    /** Whether a client without a token may upgrade and send it as its first message (original crossbar). */
    public boolean firstMessage() {
        return firstMessage;
    }

    /** Reserved paths that need a token with the {@code admin} scope. */
    public Set<String> adminPaths() {
        return adminPaths;
    }

    public int maxRevocations() {
        return maxRevocations;
    }

    public Duration revocationTtl() {
        return revocationTtl;
    }

    /** How often a key set from {@code --auth-jwks-url} is fetched again. */
    public Duration jwksRefresh() {
        return jwksRefresh;
    }

    /** The CA that signed the identity provider's certificate ({@code --auth-jwks-ca}), or null for the JVM's. */
    public java.nio.file.Path jwksCa() {
        return jwksCa;
    }

    /** Where a node on its own keeps revocations across restarts ({@code --auth-revocation-file}), or null. */
    public java.nio.file.Path revocationFile() {
        return revocationFile;
    }

    @Override
    public String toString() {
        return enabled()
                ? "auth(" + keys + ", audience " + audience + ", skew " + clockSkew.toSeconds() + "s"
                        + (firstMessage ? ", first-message tokens" : "") + ")"
                : "auth(off)";
    }

    /** Builds an {@link AuthConfig}; every setter's default is the matching constant. */
    public static final class Builder {
        private VerificationKeys keys;
        private String audience;
        private Duration clockSkew = DEFAULT_CLOCK_SKEW;
        private boolean firstMessage;
        private Set<String> adminPaths = Set.of();
        private int maxRevocations = DEFAULT_MAX_REVOCATIONS;
        private Duration revocationTtl = DEFAULT_REVOCATION_TTL;
        private java.nio.file.Path revocationFile;
        private Duration jwksRefresh = DEFAULT_JWKS_REFRESH;
        private java.nio.file.Path jwksCa;

        private Builder() {
        }

        private Builder(AuthConfig c) {
            keys = c.keys;
            audience = c.audience;
            clockSkew = c.clockSkew;
            firstMessage = c.firstMessage;
            adminPaths = c.adminPaths;
            maxRevocations = c.maxRevocations;
            revocationTtl = c.revocationTtl;
            revocationFile = c.revocationFile;
            jwksRefresh = c.jwksRefresh;
            jwksCa = c.jwksCa;
        }

        /** The verification keys; null turns access control off. */
        public Builder keys(VerificationKeys v) {
            keys = v;
            return this;
        }

        public Builder audience(String v) {
            audience = v;
            return this;
        }

        public Builder clockSkew(Duration v) {
            clockSkew = v;
            return this;
        }

        public Builder firstMessage(boolean v) {
            firstMessage = v;
            return this;
        }

        public Builder adminPaths(Set<String> v) {
            adminPaths = v;
            return this;
        }

        public Builder maxRevocations(int v) {
            maxRevocations = v;
            return this;
        }

        public Builder revocationTtl(Duration v) {
            revocationTtl = v;
            return this;
        }

        /** Null (the default): revocations in memory, or in the cluster's bucket with NATS. */
        public Builder revocationFile(java.nio.file.Path v) {
            revocationFile = v;
            return this;
        }

        public Builder jwksRefresh(Duration v) {
            jwksRefresh = v;
            return this;
        }

        public Builder jwksCa(java.nio.file.Path v) {
            jwksCa = v;
            return this;
        }

        public AuthConfig build() {
            return new AuthConfig(this);
        }
    }
}
