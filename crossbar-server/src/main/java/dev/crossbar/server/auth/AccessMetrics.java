package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Access control's meters: token refusals by status, live connections ended by expiry or
 * revocation, and the revocations held. Tags are closed sets.
 */
public final class AccessMetrics implements MeterBinder {

    /** Counter: upgrades and requests refused for their token, tagged {@code status=401|403}. */
    public static final String REFUSED = "crossbar.auth.refused";
    /** Counter: live connections closed (1008) because their token ended, tagged {@code why=expired|revoked}. */
    public static final String ENDED = "crossbar.auth.ended";
    /** Gauge: revoked jti and sid entries this node refuses now. */
    public static final String REVOCATIONS = "crossbar.auth.revocations";

    private final AccessControl access;

    public AccessMetrics(AccessControl access) {
        this.access = requireNonNull(access, "access");
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        FunctionCounter.builder(REFUSED, access, AccessControl::refusedUnauthenticated).tag("status", "401")
                .description("Refused for a missing, invalid, expired or revoked token").register(registry);
        FunctionCounter.builder(REFUSED, access, AccessControl::refusedForbidden).tag("status", "403")
                .description("Refused for a valid token that does not grant this").register(registry);
        FunctionCounter.builder(ENDED, access, AccessControl::endedExpired).tag("why", "expired")
                .description("Live connections closed because their token expired").register(registry);
        FunctionCounter.builder(ENDED, access, AccessControl::endedRevoked).tag("why", "revoked")
                .description("Live connections closed because their token was revoked").register(registry);
        Gauge.builder(REVOCATIONS, access, a -> a.revocations().size())
                .description("Revoked jti and sid entries held (each until its token would expire)").register(registry);
    }
}
