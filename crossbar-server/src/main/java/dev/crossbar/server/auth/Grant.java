package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

/**
 * What a verified token allows one connection: reading and/or writing on {@code path} until
 * {@code expiresAtMillis} (the token's {@code exp} plus the allowed clock skew). {@code jti} and
 * {@code sid} (either may be null) are what an operator revokes it by; {@code sub} (may be null)
 * is who the identity provider says the holder is, for the admin's view, the audit trail and a
 * session host.
 */
public record Grant(String path, boolean read, boolean write, String jti, String sid, long expiresAtMillis, String sub) {

    public Grant(String path, boolean read, boolean write, String jti, String sid, long expiresAtMillis) {
        this(path, read, write, jti, sid, expiresAtMillis, null);
    }

    public Grant {
        requireNonNull(path, "path");
        if (!read && !write) {
            throw new IllegalArgumentException("grant for " + path + " allows nothing (expected: read and/or write)");
        }
    }

    /** Whether a revocation of {@code jti} or {@code sid} (either may be null) covers this grant. */
    public boolean matches(String revokedJti, String revokedSid) {
        return (revokedJti != null && revokedJti.equals(jti)) || (revokedSid != null && revokedSid.equals(sid));
    }
}
