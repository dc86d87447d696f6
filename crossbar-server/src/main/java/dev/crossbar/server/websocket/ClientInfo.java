package dev.crossbar.server.websocket;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.Route;
import io.netty.util.AttributeKey;

/**
 * What the upgrade request told us about a client: its route and, for statistics, who it is.
 * Set on the channel by the HTTP gate, read by the session when the handshake completes.
 */
public record ClientInfo(Route route, String remoteAddress, String userAgent) {

    public static final AttributeKey<ClientInfo> KEY = AttributeKey.valueOf(ClientInfo.class, "client");

    public ClientInfo {
        requireNonNull(route, "route");
        requireNonNull(remoteAddress, "remoteAddress");
        requireNonNull(userAgent, "userAgent");
    }
}
