package dev.crossbar.server.admin;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.auth.Permit;
import dev.crossbar.server.session.IngestSession;
import dev.crossbar.server.websocket.ClientInfo;
import dev.crossbar.server.websocket.CloseCodes;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import io.netty.channel.Channel;
import io.netty.channel.group.ChannelGroup;

/** Closes this node's live connections that a {@link Disconnect} names, with 1008 and its reason. Any thread. */
public final class LiveConnections {

    private LiveConnections() {
    }

    /** How many of {@code sessions} {@code d} covers, each asked to close. */
    public static int close(ChannelGroup sessions, Disconnect d) {
        int n = 0;
        for (Channel ch : sessions) {
            if (matches(ch, d)) {
                ConnectionLifecycle lifecycle = ch.pipeline().get(ConnectionLifecycle.class);
                IngestSession ingest = ch.pipeline().get(IngestSession.class);
                if (lifecycle != null) {
                    lifecycle.close(CloseCodes.POLICY_VIOLATION, Disconnect.REASON);
                    n++;
                } else if (ingest != null) {
                    ingest.disconnect(Disconnect.REASON); // an HTTP ingest: 403, as its upload has no close code
                    n++;
                }
            }
        }
        return n;
    }

    static boolean matches(Channel ch, Disconnect d) {
        if (d.connection() != null) {
            return ch.id().asShortText().equals(d.connection());
        }
        if (d.sub() != null) {
            Permit p = ch.hasAttr(Permit.KEY) ? ch.attr(Permit.KEY).get() : null;
            return p != null && d.sub().equals(p.grant().sub());
        }
        ClientInfo c = ch.hasAttr(ClientInfo.KEY) ? ch.attr(ClientInfo.KEY).get() : null;
        return c != null && (d.topic().equals(c.route().path())
                || d.topic().equals(RoutingTable.streamName(c.route().topic())));
    }
}
