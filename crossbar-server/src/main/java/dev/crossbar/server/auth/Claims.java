package dev.crossbar.server.auth;

/**
 * Names of the token claims and scopes Crossbar reads; the meaning of each is in
 * {@code docs/protocol.md} ("Access control").
 */
final class Claims {

    /** The route the token is for, as a path: {@code /in/cam}, {@code /out/cam}, {@code /lab/chat}. */
    static final String TOPIC = "topic";
    /** Space-separated scopes, as in OAuth 2.0 (RFC 8693 section 4.2). */
    static final String SCOPE = "scope";
    /**
     * Several grants in one token: a list of {@code {"topic": PATH-OR-PATTERN, "scope": "read write"}},
     * first match wins, each with its own scopes (a lab page's video, data, control and shell).
     */
    static final String GRANTS = "grants";
    /** Session id: revoking it ends every token of that session. */
    static final String SESSION = "sid";

    /** Scope: receive the route's messages. */
    static final String READ = "read";
    /** Scope: send messages that are relayed. */
    static final String WRITE = "write";
    /** Scope: host a {@code schema=session} stream ({@code /in/<t>}): be handed its clients' sessions. */
    static final String HOST = "host";
    /** Scope: the admin endpoints and, when protected, the statistics endpoints. */
    static final String ADMIN = "admin";

    private Claims() {
    }
}
