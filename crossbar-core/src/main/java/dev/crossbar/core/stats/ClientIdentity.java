package dev.crossbar.core.stats;

import static java.util.Objects.requireNonNull;

/**
 * Who a member is, as statistics show it: its connection's id, and the address and user agent its
 * upgrade request gave (already cut to what the relay keeps), and, with access control, its token's
 * subject and id (null without). Privacy rules are applied by whoever shows it, not here.
 */
public record ClientIdentity(String connectionId, String remoteAddress, String userAgent, String sub, String jti) {

    /** A client without a token. */
    public ClientIdentity(String connectionId, String remoteAddress, String userAgent) {
        this(connectionId, remoteAddress, userAgent, null, null);
    }

    public ClientIdentity {
        requireNonNull(connectionId, "connectionId");
        requireNonNull(remoteAddress, "remoteAddress");
        requireNonNull(userAgent, "userAgent");
    }

    /** A member with no client behind it (a probe, a stand-in): known by an id only. */
    public static ClientIdentity anonymous(Object member) {
        return new ClientIdentity(Integer.toHexString(System.identityHashCode(member)), "", "");
    }
}
