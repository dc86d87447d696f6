package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import io.netty.util.AttributeKey;

/**
 * One connection's access: its {@link Grant}, until the grant ends (expiry or revocation). Set as
 * a channel attribute before the session joins; the session asks it before relaying a message in
 * either direction.
 *
 * <p>Only the connection's event loop reads or ends it, so the flag needs no synchronisation.
 */
public final class Permit {

    public static final AttributeKey<Permit> KEY = AttributeKey.valueOf(Permit.class, "permit");

    private final Grant grant;
    private boolean ended;

    public Permit(Grant grant) {
        this.grant = requireNonNull(grant, "grant");
    }

    public Grant grant() {
        return grant;
    }

    /** Whether this connection's messages may be relayed now. */
    public boolean maySend() {
        return grant.write() && !ended;
    }

    /** Whether this connection may be sent the topic's messages now. */
    public boolean mayReceive() {
        return grant.read() && !ended;
    }

    /** Stops everything this permit allowed; the connection is being closed. */
    void end() {
        ended = true;
    }

    public boolean ended() {
        return ended;
    }
}
