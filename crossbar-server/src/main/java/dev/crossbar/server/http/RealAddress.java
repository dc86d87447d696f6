package dev.crossbar.server.http;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.net.InetSocketAddress;

/**
 * The client's address as a trusted proxy reported it (PROXY protocol header, {@code Forwarded},
 * {@code X-Forwarded-For}), set on the channel before the upgrade gate sees its request; absent,
 * the socket's peer is the client. Limits, statistics (with their privacy truncation), the audit
 * trail and 1:1 session offers all read the address from here, through {@link #of}.
 */
public final class RealAddress {

    public static final AttributeKey<InetSocketAddress> KEY = AttributeKey.valueOf(RealAddress.class, "real-address");

    private RealAddress() {
    }

    /** The client's address: the one a trusted proxy gave, else the socket's peer (null if not an IP socket). */
    public static InetSocketAddress of(Channel ch) {
        // hasAttr first: attr() would add an empty attribute to every channel not behind a proxy.
        if (ch.hasAttr(KEY)) {
            InetSocketAddress reported = ch.attr(KEY).get();
            if (reported != null) {
                return reported;
            }
        }
        return ch.remoteAddress() instanceof InetSocketAddress peer ? peer : null;
    }

    /** {@code host:port} as statistics and the audit trail show it ({@code [v6]:port} for IPv6). */
    public static String format(InetSocketAddress a) {
        if (a == null) {
            return "?";
        }
        String host = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
        return host + ":" + a.getPort();
    }
}
