package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import com.nimbusds.jwt.JWTClaimsSet;
import dev.crossbar.core.route.InvalidRouteException;
import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.route.StreamPattern;
import dev.crossbar.core.schema.Role;
import dev.crossbar.server.config.AuthConfig;
import java.text.ParseException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

/**
 * The relay's access decisions: which {@link Grant} a token gives on a route, whether a token is
 * an admin's, and the revocations. One per server, shared by every connection's handlers.
 *
 * <p>A token names its route either with a {@code topic} claim (and {@code aud} = the audience),
 * or, as the original crossbar's tokens do, with {@code aud} = audience + path and no
 * {@code topic}. Scopes come from {@code scope}; an original-style token without one grants what
 * the route allows, as the original did. See {@code docs/protocol.md}.
 */
public final class AccessControl {

    /**
     * What decisions follow, replaced whole by a configuration reload ({@link #reconfigure}): a
     * decision reads one of these, never half of an old one and half of a new.
     */
    private record Rules(AuthConfig config, TokenVerifier verifier, RouteParser paths, RoutingTable routing) {
    }

    private volatile Rules rules;
    private final RevocationList revocations;
    /** Where revocations outlive this process and reach the other nodes; set once at start. */
    private volatile RevocationStore store = RevocationStore.MEMORY;
    /** The identity provider's keys ({@code --auth-jwks-url}), or null; kept across reloads. */
    private final RemoteJwks remoteKeys;
    private final LongAdder refusedUnauthenticated = new LongAdder();
    private final LongAdder refusedForbidden = new LongAdder();
    private final LongAdder endedExpired = new LongAdder();
    private final LongAdder endedRevoked = new LongAdder();

    public AccessControl(AuthConfig config, int maxPathLength) {
        this(config, maxPathLength, RoutingTable.EMPTY);
    }

    public AccessControl(AuthConfig config, int maxPathLength, RoutingTable routing) {
        if (config.keys() != null && config.keys().jwksUrl() != null) {
            remoteKeys = new RemoteJwks(config.keys().jwksUrl(), config.jwksCa() == null ? defaultTls()
                    : dev.crossbar.server.config.CaCertificates.trusting(config.jwksCa(), "--auth-jwks-ca"), config.jwksRefresh());
            remoteKeys.start();
        } else {
            remoteKeys = null;
        }
        reconfigure(config, maxPathLength, routing);
        this.revocations = new RevocationList(config.maxRevocations());
    }

    /**
     * New keys, audience, clock skew and stream rules for decisions from now on (a reload); the
     * revocations stay. Connections admitted before keep their grants until those expire.
     *
     * @param routing which streams are {@code schema=session}: their roles need other scopes
     */
    public void reconfigure(AuthConfig config, int maxPathLength, RoutingTable routing) {
        requireNonNull(config, "config");
        rules = new Rules(config, new TokenVerifier(config, remoteKeys), new RouteParser(maxPathLength),
                requireNonNull(routing, "routing"));
    }

    private static javax.net.ssl.SSLContext defaultTls() {
        try {
            return javax.net.ssl.SSLContext.getDefault();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalArgumentException("--auth-jwks-url: no TLS in this JVM: " + e.getMessage(), e);
        }
    }

    /** The identity provider's keys, or null without {@code --auth-jwks-url}. */
    public RemoteJwks remoteKeys() {
        return remoteKeys;
    }

    /** Stops fetching the identity provider's keys. */
    public void close() {
        if (remoteKeys != null) {
            remoteKeys.close();
        }
    }

    public AuthConfig config() {
        return rules.config();
    }

    public RevocationList revocations() {
        return revocations;
    }

    /** Keeps revocations in {@code s} from now on (set at start, before any is made). */
    public void store(RevocationStore s) {
        this.store = java.util.Objects.requireNonNull(s, "s");
    }

    public RevocationStore store() {
        return store;
    }

    /**
     * A revocation the store handed on (this node's own, another node's, or one kept from before
     * a restart): listed here until it expires. False if the list is full of unexpired entries.
     */
    public boolean listed(Revocation r) {
        long now = System.currentTimeMillis();
        return r.untilMillis() <= now || revocations.revoke(r.jti(), r.sid(), r.untilMillis(), now);
    }

    /** Counts a refusal (401 or 403) for the statistics. */
    void recordRefusal(AccessDenied denied) {
        (denied.status().code() == AccessDenied.FORBIDDEN.code() ? refusedForbidden : refusedUnauthenticated).increment();
    }

    /** Counts a live connection ended by expiry ({@code revoked} false) or revocation. */
    void recordEnded(boolean revoked) {
        (revoked ? endedRevoked : endedExpired).increment();
    }

    /** Connections and requests refused with 401 (or 1008 in first-message mode) since start. */
    public long refusedUnauthenticated() {
        return refusedUnauthenticated.sum();
    }

    /** Connections and requests refused with 403 (or 1008 in first-message mode) since start. */
    public long refusedForbidden() {
        return refusedForbidden.sum();
    }

    /** Live connections closed because their token expired. */
    public long endedExpired() {
        return endedExpired.sum();
    }

    /** Live connections closed because their token was revoked. */
    public long endedRevoked() {
        return endedRevoked.sum();
    }

    /**
     * What {@code token} allows on {@code route}.
     *
     * @throws AccessDenied 401 if the token is missing, invalid here or revoked; 403 if it is valid but
     *                      for another route, or without the scope the route's role needs
     */
    public Grant grantFor(String token, Route route) throws AccessDenied {
        Rules r = rules;
        TokenVerifier verifier = r.verifier();
        JWTClaimsSet claims = verifier.verify(token);
        String jti = claims.getJWTID();
        String sid = stringClaim(claims, Claims.SESSION);
        long now = System.currentTimeMillis();
        if (revocations.isRevoked(jti, sid, now)) {
            throw AccessDenied.unauthenticated("token revoked");
        }
        String sub = claims.getSubject();
        Set<String> scopes;
        boolean originalStyle = false;
        Object grants = claims.getClaim(Claims.GRANTS);
        if (grants != null) {
            scopes = grantedScopes(r, grants, route);
        } else {
            String topic = stringClaim(claims, Claims.TOPIC);
            originalStyle = topic == null;
            if (originalStyle) {
                topic = pathFromAudience(verifier, claims.getAudience());
                if (topic == null) {
                    throw AccessDenied.forbidden("token names no topic (expected: a topic claim, a grants claim, or aud = "
                            + verifier.audience() + "<path>)");
                }
            }
            if (!covers(r, topic, route)) {
                throw AccessDenied.forbidden("token is for " + topic + ", not " + route.path());
            }
            scopes = scopes(claims);
        }
        boolean read;
        boolean write;
        if (scopes == null) {
            // The original crossbar had no scopes: a token for a route allowed what the route allows.
            read = originalStyle;
            write = originalStyle;
        } else {
            read = scopes.contains(Claims.READ);
            write = scopes.contains(Claims.WRITE);
        }
        Role role = route.role();
        long expiresAt = claims.getExpirationTime().getTime() + verifier.skewMillis();
        if (r.routing().hasSessions() && r.routing().resolve(route.topic()).session()) {
            // A host is handed every client's private session, so hosting needs its own scope; a
            // client's session goes both ways, so connecting needs both.
            if (role == Role.PUBLISHER && (scopes == null || !scopes.contains(Claims.HOST))) {
                throw AccessDenied.forbidden("token does not grant host on " + route.path());
            }
            if (role == Role.SUBSCRIBER && !(read && write)) {
                throw AccessDenied.forbidden("token does not grant read and write on " + route.path()
                        + " (a session goes both ways)");
            }
            return new Grant(route.path(), true, true, jti, sid, expiresAt, sub);
        }
        if (role == Role.PUBLISHER && !write) {
            throw AccessDenied.forbidden("token does not grant write on " + route.path());
        }
        if (role == Role.SUBSCRIBER && !read) {
            throw AccessDenied.forbidden("token does not grant read on " + route.path());
        }
        if (!read && !write) {
            throw AccessDenied.forbidden("token grants neither read nor write on " + route.path());
        }
        return new Grant(route.path(), read, write, jti, sid, expiresAt, sub);
    }

    /**
     * Checks that {@code token} is an admin's: valid here, not revoked, with the {@code admin} scope.
     *
     * @throws AccessDenied 401 if missing, invalid or revoked; 403 without the admin scope
     */
    public void checkAdmin(String token) throws AccessDenied {
        TokenVerifier verifier = rules.verifier();
        JWTClaimsSet claims = verifier.verify(token);
        if (revocations.isRevoked(claims.getJWTID(), stringClaim(claims, Claims.SESSION), System.currentTimeMillis())) {
            throw AccessDenied.unauthenticated("token revoked");
        }
        Set<String> scopes = scopes(claims);
        if (scopes == null || !scopes.contains(Claims.ADMIN)) {
            throw AccessDenied.forbidden("token lacks the admin scope");
        }
    }

    /**
     * Whether a token's topic covers {@code route}: a path names exactly that path; a pattern with
     * {@code *} or {@code **} segments (the syntax of {@code --route}) names every stream it matches,
     * in every role ({@code /in/}, {@code /out/}, N:N), which the scopes then narrow.
     */
    private static boolean covers(Rules r, String topic, Route route) throws AccessDenied {
        if (topic.contains("*")) {
            StreamPattern pattern;
            try {
                pattern = StreamPattern.parse(topic);
            } catch (IllegalArgumentException e) {
                throw AccessDenied.forbidden("token topic is not a valid pattern: " + e.getMessage());
            }
            return pattern.matches(RoutingTable.streamName(route.topic()));
        }
        try {
            return r.paths().parse(topic).path().equals(route.path());
        } catch (InvalidRouteException e) {
            throw AccessDenied.forbidden("token topic is not a valid path: " + e.getMessage());
        }
    }

    /** The scopes of the first entry of a {@code grants} claim that covers {@code route}. */
    private static Set<String> grantedScopes(Rules r, Object grants, Route route) throws AccessDenied {
        if (!(grants instanceof List<?> list)) {
            throw AccessDenied.forbidden("malformed grants claim (expected: a list of {\"topic\":...,\"scope\":...})");
        }
        for (Object g : list) {
            if (!(g instanceof Map<?, ?> m) || !(m.get("topic") instanceof String topic)
                    || !(m.get("scope") instanceof String scope)) {
                throw AccessDenied.forbidden("malformed grants entry (expected: {\"topic\":...,\"scope\":...})");
            }
            if (covers(r, topic, route)) {
                return Set.copyOf(Arrays.asList(scope.strip().split("\\s+")));
            }
        }
        throw AccessDenied.forbidden("token grants nothing on " + route.path());
    }

    /** The path after the audience in an original-style {@code aud}, or null if there is none. */
    private static String pathFromAudience(TokenVerifier verifier, List<String> audiences) {
        String prefix = verifier.audience() + "/";
        for (String a : audiences) {
            if (a != null && a.startsWith(prefix)) {
                return a.substring(verifier.audience().length());
            }
        }
        return null;
    }

    /** The scope claim split on spaces, or null if absent. */
    private static Set<String> scopes(JWTClaimsSet claims) throws AccessDenied {
        String scope = stringClaim(claims, Claims.SCOPE);
        return scope == null ? null : Set.copyOf(Arrays.asList(scope.strip().split("\\s+")));
    }

    private static String stringClaim(JWTClaimsSet claims, String name) throws AccessDenied {
        try {
            return claims.getStringClaim(name);
        } catch (ParseException e) {
            throw AccessDenied.forbidden("malformed " + name + " claim (expected: a string)");
        }
    }
}
