package dev.crossbar.server.auth;

import io.netty.channel.Channel;
import io.netty.channel.group.ChannelGroup;

/**
 * Ends this node's live connections that a revocation covers: each one's {@link AccessEnforcer}
 * stops relaying for it and closes it with 1008 ({@link AccessEnforcer#REVOKED}). Any thread; a
 * connection already ended is left as it is, so the same revocation may come twice.
 */
public final class LiveRevocations {

    private LiveRevocations() {
    }

    /** How many of {@code sessions} the revocation covers, each asked to end. */
    public static int end(ChannelGroup sessions, Revocation r) {
        int n = 0;
        for (Channel ch : sessions) {
            Permit permit = ch.hasAttr(Permit.KEY) ? ch.attr(Permit.KEY).get() : null;
            if (permit != null && permit.grant().matches(r.jti(), r.sid())) {
                ch.pipeline().fireUserEventTriggered(new AccessEnded(AccessEnforcer.REVOKED, true));
                n++;
            }
        }
        return n;
    }
}
