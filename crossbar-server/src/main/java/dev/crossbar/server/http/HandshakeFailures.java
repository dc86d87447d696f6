package dev.crossbar.server.http;

import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

/**
 * Connections refused before they became WebSockets, counted by reason for {@code /metrics}.
 * The reasons are a closed set, so they are safe as a metric tag. Refusals are rare and come from
 * any event loop, hence an adder per reason.
 */
public final class HandshakeFailures {

    /** Why a connection did not become a WebSocket. */
    public enum Reason {
        /** The HTTP request could not be decoded, or its path could not be percent-decoded (400). */
        MALFORMED_REQUEST,
        /** The path is not a valid topic: dot segment, control character, too long, empty (400). */
        BAD_ROUTE,
        /** A plain HTTP request on a topic path, not a WebSocket upgrade (426). */
        NOT_UPGRADE,
        /** An upgrade with a method other than GET (405). */
        METHOD_NOT_ALLOWED,
        /** A path this address does not serve, e.g. a topic on the admin address (404). */
        NOT_FOUND,
        /** No complete upgrade within the handshake timeout (connection closed). */
        TIMEOUT,
        /** An {@code Origin} outside the configured allow-list (403). */
        ORIGIN_NOT_ALLOWED,
        /** The relay is at its connection limit (503). */
        TOO_MANY_CONNECTIONS,
        /** Too many connections from one remote address (429). */
        TOO_MANY_FROM_ADDRESS,
        /** The connection would create a topic beyond the topic limit (503). */
        TOPIC_LIMIT,
        /** A {@code /session/...} path at which no session waits: guessed, spent or expired (404). */
        NO_SESSION,
        /** The node is draining before a restart: connect to another (503). */
        DRAINING;

        /** Lower-case name used as the {@code reason} tag. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final LongAdder[] counts = new LongAdder[Reason.values().length];

    public HandshakeFailures() {
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    public void record(Reason reason) {
        counts[reason.ordinal()].increment();
    }

    public long count(Reason reason) {
        return counts[reason.ordinal()].sum();
    }
}
