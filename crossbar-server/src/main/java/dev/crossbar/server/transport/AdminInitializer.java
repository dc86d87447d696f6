package dev.crossbar.server.transport;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.auth.AccessControl;
import dev.crossbar.server.auth.AdminGuard;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.http.HandshakeFailures;
import dev.crossbar.server.http.HandshakeTimeout;
import dev.crossbar.server.http.HttpEndpoint;
import dev.crossbar.server.http.HttpKeepAlive;
import dev.crossbar.server.http.UpgradeGate;
import dev.crossbar.server.websocket.ReadIdleTimer;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Assembles the pipeline of a connection to the admin address ({@code --admin-listen}), which
 * serves the reserved endpoints and no topics:
 *
 * <pre>
 *  socket → handshake-timeout → idle → http-codec → http-aggregator → keep-alive
 *         → [admin-guard] → upgrade-gate (endpoints only)
 * </pre>
 *
 * With {@code --stats-require-admin}, {@code admin-guard} asks for the admin token here as on the
 * main address: a separate address is no reason to show who is connected to whoever reaches it.
 *
 * The stats socket endpoint adds its own WebSocket handlers behind the gate when it accepts an upgrade.
 */
public final class AdminInitializer extends ChannelInitializer<SocketChannel> {

    private final HandshakeFailures failures;
    /** The configuration and endpoints new connections get; replaced together by a reload. */
    private volatile Assembly current;

    private record Assembly(ServerConfig config, Map<String, HttpEndpoint> endpoints, AdminGuard adminGuard) {
    }

    /** Access control, or null when tokens are off. */
    private final AccessControl access;

    /** @param access access control, or null: with {@code --stats-require-admin} the same guard as the main address */
    public AdminInitializer(ServerConfig config, Map<String, HttpEndpoint> endpoints, HandshakeFailures failures,
                            AccessControl access) {
        this.failures = requireNonNull(failures, "failures");
        this.access = access;
        reconfigure(config, endpoints);
    }

    /** Assembles connections from now on after {@code config} (a reload); those open keep theirs. */
    public void reconfigure(ServerConfig config, Map<String, HttpEndpoint> endpoints) {
        AdminGuard guard = access == null || access.config().adminPaths().isEmpty()
                ? null : new AdminGuard(access, access.config().adminPaths());
        current = new Assembly(requireNonNull(config, "config"), Map.copyOf(endpoints), guard);
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        Assembly a = current;
        ServerConfig config = a.config();
        Map<String, HttpEndpoint> endpoints = a.endpoints();
        ch.config().setWriteBufferWaterMark(
                new WriteBufferWaterMark(config.maxClientQueueBytes() / 2, config.maxClientQueueBytes()));
        ChannelPipeline p = ch.pipeline();
        p.addLast("handshake-timeout", new HandshakeTimeout(config.handshakeTimeout().toMillis(), failures));
        p.addLast("idle", new ReadIdleTimer(config.pingInterval().toMillis(), TimeUnit.MILLISECONDS));
        p.addLast("http-codec", new HttpServerCodec(CrossbarInitializer.MAX_UPGRADE_REQUEST_BYTES,
                CrossbarInitializer.MAX_HEADER_BYTES, 8192));
        p.addLast("http-aggregator", new HttpObjectAggregator(CrossbarInitializer.MAX_UPGRADE_REQUEST_BYTES));
        p.addLast("keep-alive", new HttpKeepAlive(config.httpIdleTimeout().toMillis()));
        if (a.adminGuard() != null) {
            p.addLast("admin-guard", a.adminGuard()); // the same rule as on the main address
        }
        p.addLast("upgrade-gate", new UpgradeGate(null, endpoints, failures, config.trustForwardedFor(), Set.of(), null));
    }
}
