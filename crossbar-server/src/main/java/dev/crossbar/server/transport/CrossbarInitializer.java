package dev.crossbar.server.transport;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.relay.Router;
import dev.crossbar.core.route.RouteParser;
import dev.crossbar.server.ServerConfig;
import dev.crossbar.server.http.HandshakeFailures;
import dev.crossbar.server.http.HttpEndpoint;
import dev.crossbar.server.http.UpgradeGate;
import dev.crossbar.server.session.HandshakeTimeout;
import dev.crossbar.server.session.MessageAssembler;
import dev.crossbar.server.session.RelaySession;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.timeout.IdleStateHandler;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Assembles each connection's pipeline, and nothing else (see {@code docs/architecture.md}):
 *
 * <pre>
 *  socket → limits → handshake-timeout → idle → http-codec → http-aggregator → upgrade-gate
 *         → ws-protocol (handshake, ping/pong, close, UTF-8 check) → assembler → session
 * </pre>
 *
 * After the upgrade Netty swaps the HTTP codec for the WebSocket frame codec, the gate removes
 * itself, and the session removes the handshake timeout.
 */
public final class CrossbarInitializer extends ChannelInitializer<Channel> {

    /** Largest upgrade request accepted: request line plus headers; no body is expected. */
    static final int MAX_UPGRADE_REQUEST_BYTES = 16 * 1024;
    static final int MAX_HEADER_BYTES = 8 * 1024;

    private final ServerConfig config;
    private final Router router;
    private final ChannelGroup sessions;
    private final RouteParser routes;
    private final Map<String, HttpEndpoint> endpoints;
    private final WebSocketServerProtocolConfig wsConfig;
    private final ConnectionLimiter limiter;
    private final HandshakeFailures failures;

    /**
     * @param limiter counts connections against the connection limits
     * @param failures counts refused upgrades for {@code /metrics}
     */
    public CrossbarInitializer(ServerConfig config, Router router, ChannelGroup sessions,
                               Map<String, HttpEndpoint> endpoints, ConnectionLimiter limiter,
                               HandshakeFailures failures) {
        this.failures = requireNonNull(failures, "failures");
        this.config = requireNonNull(config, "config");
        this.router = requireNonNull(router, "router");
        this.sessions = requireNonNull(sessions, "sessions");
        this.endpoints = Map.copyOf(endpoints);
        this.routes = new RouteParser(config.maxPathLength());
        this.limiter = requireNonNull(limiter, "limiter");
        this.wsConfig = WebSocketServerProtocolConfig.newBuilder()
                .websocketPath("/")
                .checkStartsWith(true)
                .subprotocols(String.join(",", config.subprotocols()))
                .handshakeTimeoutMillis(config.handshakeTimeout().toMillis())
                .forceCloseTimeoutMillis(1000)
                .handleCloseFrames(true)
                .dropPongFrames(true)
                .decoderConfig(WebSocketDecoderConfig.newBuilder()
                        .maxFramePayloadLength(config.maxMessageBytes())
                        .expectMaskedFrames(true)
                        .allowMaskMismatch(false)
                        .allowExtensions(false)
                        .closeOnProtocolViolation(true)
                        .withUTF8Validator(true)
                        .build())
                .build();
    }

    @Override
    protected void initChannel(Channel ch) {
        long pingMillis = config.pingInterval().toMillis();
        int missedPings = (int) Math.max(2, Math.ceil((double) config.idleTimeout().toMillis() / pingMillis));
        ChannelPipeline p = ch.pipeline();
        p.addLast("limits", new ConnectionGuard(limiter));
        p.addLast("handshake-timeout", new HandshakeTimeout(config.handshakeTimeout().toMillis(), failures));
        p.addLast("idle", new IdleStateHandler(false, pingMillis, 0, 0, TimeUnit.MILLISECONDS));
        p.addLast("http-codec", new HttpServerCodec(MAX_UPGRADE_REQUEST_BYTES, MAX_HEADER_BYTES, 8192));
        p.addLast("http-aggregator", new HttpObjectAggregator(MAX_UPGRADE_REQUEST_BYTES));
        p.addLast("upgrade-gate", new UpgradeGate(routes, endpoints, failures, config.trustForwardedFor(),
                Set.copyOf(config.allowedOrigins()), router.topics()));
        p.addLast("ws-protocol", new WebSocketServerProtocolHandler(wsConfig));
        p.addLast("assembler", new MessageAssembler(config.maxMessageBytes()));
        p.addLast("session", new RelaySession(router, sessions, config.maxClientQueueBytes(), config.slowConsumerPolicy(),
                config.slowConsumerGrace().toMillis(), missedPings));
    }
}
