package dev.crossbar.server.auth;

/**
 * One revocation as stores keep and nodes pass it on: a token id and/or a session id (at least
 * one), refused until {@code untilMillis} (when every token it covers has expired anyway).
 */
public record Revocation(String jti, String sid, long untilMillis) {

    public Revocation {
        if (jti == null && sid == null) {
            throw new IllegalArgumentException("revocation: no jti or sid (expected: at least one)");
        }
    }

    /** The same ids, kept until the later of the two. */
    public Revocation latest(Revocation other) {
        return other == null || other.untilMillis <= untilMillis ? this : new Revocation(jti, sid, other.untilMillis);
    }
}
