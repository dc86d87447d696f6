package dev.crossbar.server.config;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * Limits of 1:1 sessions.
 *
 * @param openTimeout how long a host has to open a session it was offered; then the client is closed
 *                    with 1013 and a reason
 * @param maxPending  sessions offered to hosts and not yet opened, relay-wide; a client beyond it is
 *                    closed with 1013 (each one holds a client connection and a timer)
 * @param url         in a cluster: this node's address as hosts reach it ({@code wss://node-a.example.org});
 *                    a host on another node opens a session of a client here at {@code url/session/<id>}.
 *                    Null: {@code ws(s)://<listen address>:<port>} when that is a specific address
 * @param fullClientDetails whether a host's session offer names the client's whole address; by
 *                    default it is truncated as statistics truncate it (a host is a lab's program,
 *                    not the relay's operator)
 */
public record SessionConfig(Duration openTimeout, int maxPending, String url, boolean fullClientDetails) {

    /** Long enough for an agent to open a WebSocket across a slow link, short enough for a person to wait. */
    public static final Duration DEFAULT_OPEN_TIMEOUT = Duration.ofSeconds(10);
    public static final int DEFAULT_MAX_PENDING = 1024;
    /** Off: an offer carries the client's address truncated to /24 or /48, its token's sub whole. */
    public static final boolean DEFAULT_FULL_CLIENT_DETAILS = false;
    public static final SessionConfig DEFAULT = new SessionConfig(DEFAULT_OPEN_TIMEOUT, DEFAULT_MAX_PENDING, null);

    public SessionConfig(Duration openTimeout, int maxPending, String url) {
        this(openTimeout, maxPending, url, DEFAULT_FULL_CLIENT_DETAILS);
    }

    public SessionConfig(Duration openTimeout, int maxPending) {
        this(openTimeout, maxPending, null);
    }

    public SessionConfig {
        requireNonNull(openTimeout, "openTimeout");
        if (openTimeout.isNegative() || openTimeout.isZero()) {
            throw new IllegalArgumentException("sessionOpenTimeout: " + openTimeout + " (expected: > 0)");
        }
        if (maxPending < 1) {
            throw new IllegalArgumentException("maxPendingSessions: " + maxPending + " (expected: > 0)");
        }
        if (url != null && !(url.startsWith("ws://") || url.startsWith("wss://"))) {
            throw new IllegalArgumentException("sessionUrl: '" + url + "' (expected: ws://HOST[:PORT] or wss://HOST[:PORT])");
        }
        if (url != null && url.endsWith("/")) {
            url = url.substring(0, url.length() - 1);
        }
    }
}
