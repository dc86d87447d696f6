package dev.crossbar.server.pair;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * Limits of 1:1 sessions.
 *
 * @param openTimeout how long a host has to open a session it was offered; then the client is closed
 *                    with 1013 and a reason
 * @param maxPending  sessions offered to hosts and not yet opened, relay-wide; a client beyond it is
 *                    closed with 1013 (each one holds a client connection and a timer)
 */
public record SessionConfig(Duration openTimeout, int maxPending) {

    /** Long enough for an agent to open a WebSocket across a slow link, short enough for a person to wait. */
    public static final Duration DEFAULT_OPEN_TIMEOUT = Duration.ofSeconds(10);
    public static final int DEFAULT_MAX_PENDING = 1024;
    public static final SessionConfig DEFAULT = new SessionConfig(DEFAULT_OPEN_TIMEOUT, DEFAULT_MAX_PENDING);

    public SessionConfig {
        requireNonNull(openTimeout, "openTimeout");
        if (openTimeout.isNegative() || openTimeout.isZero()) {
            throw new IllegalArgumentException("sessionOpenTimeout: " + openTimeout + " (expected: > 0)");
        }
        if (maxPending < 1) {
            throw new IllegalArgumentException("maxPendingSessions: " + maxPending + " (expected: > 0)");
        }
    }
}
