package dev.crossbar.server.auth;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Revoked token ids ({@code jti}) and session ids ({@code sid}), each remembered only until the
 * revoked token would have expired anyway, and at most {@code maxEntries} at once: when full, the
 * expired entries are purged, and if none has expired a new revocation is refused (the operator is
 * told) rather than an older one silently forgotten.
 *
 * <p>Thread-safe: the admin endpoint adds on one event loop while every gate reads.
 */
public final class RevocationList {

    private final int maxEntries;
    private final Map<String, Long> jtis = new ConcurrentHashMap<>();
    private final Map<String, Long> sids = new ConcurrentHashMap<>();

    public RevocationList(int maxEntries) {
        if (maxEntries <= 0) {
            throw new IllegalArgumentException("maxEntries: " + maxEntries + " (expected: > 0)");
        }
        this.maxEntries = maxEntries;
    }

    /**
     * Revokes {@code jti} and/or {@code sid} (at least one non-null) until {@code untilMillis}.
     *
     * @return false if the list is full of unexpired entries and nothing was added
     */
    public synchronized boolean revoke(String jti, String sid, long untilMillis, long nowMillis) {
        int adding = (jti != null ? 1 : 0) + (sid != null ? 1 : 0);
        if (adding == 0) {
            throw new IllegalArgumentException("revoke: no jti or sid (expected: at least one)");
        }
        if (size() + adding > maxEntries) {
            purge(nowMillis);
            if (size() + adding > maxEntries) {
                return false;
            }
        }
        if (jti != null) {
            jtis.merge(jti, untilMillis, Math::max);
        }
        if (sid != null) {
            sids.merge(sid, untilMillis, Math::max);
        }
        return true;
    }

    /** Whether a token with this {@code jti} or {@code sid} (either may be null) is revoked at {@code nowMillis}. */
    public boolean isRevoked(String jti, String sid, long nowMillis) {
        return live(jtis, jti, nowMillis) || live(sids, sid, nowMillis);
    }

    private static boolean live(Map<String, Long> map, String key, long now) {
        if (key == null || map.isEmpty()) {
            return false;
        }
        Long until = map.get(key);
        if (until == null) {
            return false;
        }
        if (until <= now) {
            map.remove(key, until);
            return false;
        }
        return true;
    }

    /** Entries held now, expired or not. */
    public int size() {
        return jtis.size() + sids.size();
    }

    public int maxEntries() {
        return maxEntries;
    }

    private void purge(long now) {
        jtis.values().removeIf(until -> until <= now);
        sids.values().removeIf(until -> until <= now);
    }
}
