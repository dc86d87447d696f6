package dev.crossbar.server.transport;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.topic.Router;
import dev.crossbar.server.auth.AccessControl;
import dev.crossbar.server.auth.AccessEnforcer;
import dev.crossbar.server.auth.AdminGuard;
import dev.crossbar.server.auth.AuthGate;
import dev.crossbar.server.auth.IngestAccess;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.http.Draining;
import dev.crossbar.server.http.HandshakeFailures;
import dev.crossbar.server.http.HandshakeTimeout;
import dev.crossbar.server.http.HttpEndpoint;
import dev.crossbar.server.http.HttpKeepAlive;
import dev.crossbar.server.http.IngestGate;
import dev.crossbar.server.http.IngestTail;
import dev.crossbar.server.http.UpgradeAdmission;
import dev.crossbar.server.http.UpgradeGate;
import dev.crossbar.server.pair.SessionGate;
import dev.crossbar.server.pair.SessionRegistry;
import dev.crossbar.server.session.IngestSession;
import dev.crossbar.server.session.RelaySession;
import dev.crossbar.server.session.SendBrakes;
import dev.crossbar.server.tls.ServerTlsContext;
import dev.crossbar.server.tls.TlsErrors;
import dev.crossbar.server.tls.TlsPort;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import dev.crossbar.server.websocket.ProtocolSwap;
import dev.crossbar.server.websocket.ReadIdleTimer;
import dev.crossbar.server.websocket.WebSocketProtocol;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.haproxy.HAProxyMessageDecoder;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Assembles each connection's pipeline, and nothing else (see {@code docs/architecture.md}):
 *
 * <pre>
 *  socket → limits → handshake-timeout → idle → http-codec → ingest-gate → http-aggregator → keep-alive
 *         → upgrade-gate → home-loop → ws-protocol (the handshake) → lifecycle (keepalive, control frames,
 *           closing, protocol violations) → protocol-swap → session
 * </pre>
 *
 * {@code home-loop} moves the connection onto its topic's event loop before the upgrade is answered
 * (see {@link HomeLoop}); it is absent with one loop or {@code --home-loop-members 0}.
 *
 * With TLS, {@code tls-detect} (replaced by the SslHandler, {@code tls}) and {@code tls-errors} come
 * first. With access control, {@code admin-guard} protects reserved paths before the upgrade gate,
 * {@code auth-gate} checks the token between the gate and the handshake, and {@code access} holds
 * the connection to its permit between the lifecycle and the session:
 *
 * <pre>
 *  socket → [tls-detect → tls-errors] → handshake-timeout → idle → http-codec → ingest-gate
 *         → http-aggregator → keep-alive → [admin-guard] → upgrade-gate → [auth-gate] → ws-protocol
 *         → lifecycle → protocol-swap → [first-message-auth] → [access] → session
 * </pre>
 *
 * An HTTP ingest request ({@code POST}/{@code PUT} on {@code /in/<stream>}) leaves at the
 * {@code ingest-gate}, before its body is aggregated: the gate replaces everything after itself by
 * {@code [ingest-access] → ingest} ({@link IngestAccess}, {@link IngestSession}), which publish the
 * body as it arrives:
 *
 * <pre>
 *  socket → [tls] → handshake-timeout → idle → http-codec → [ingest-access] → ingest
 * </pre>
 *
 * On a {@code schema=session} stream or a {@code /session/<id>} path the upgrade gate fits the tail
 * for a 1:1 session instead ({@link SessionGate}): {@code session} becomes the host's or the session's
 * end.
 *
 * Behind a trusted proxy ({@code --trusted-proxies}), {@code proxy-protocol} and {@code proxy-header}
 * come right after {@code limits} with {@code --proxy-protocol} ({@link ProxyHeader}), or else
 * {@code forwarded-client} right after {@code http-aggregator} ({@link ForwardedClient}): either
 * says who the client is before anything counts or shows its address.
 *
 * The limits handler leaves once the channel is active. {@code keep-alive} keeps the connection
 * open between plain HTTP requests (reserved paths) and answers pipelined ones in order. After the
 * upgrade Netty swaps the HTTP codec for its WebSocket frame codec; {@code protocol-swap} then
 * puts the relay's reader in place of Netty's decoder and takes {@code ws-protocol} out
 * ({@link ProtocolSwap}), so that a message meets the idle timer, the reader and its session; the
 * gate and keep-alive remove themselves, and the session removes the handshake timeout. A relay
 * session writes relayed messages (frames already encoded) from the encoder's context, past
 * {@code lifecycle}.
 *
 */
public final class CrossbarInitializer extends ChannelInitializer<Channel> {

    /** Largest upgrade request accepted: request line plus headers; no body is expected. */
    static final int MAX_UPGRADE_REQUEST_BYTES = 16 * 1024;
    static final int MAX_HEADER_BYTES = 8 * 1024;
    /** Pipeline name of the idle timer, which {@link HomeLoop} re-arms after a move. */
    static final String IDLE = "idle";

    private final Router router;
    private final ChannelGroup sessions;
    private final AddressAdmission admission;
    /** Counts a connection whose socket peer is its client. */
    private final ConnectionGuard guard;
    /** Counts a connection from a trusted proxy, whose client's address comes later. */
    private final ConnectionGuard proxiedGuard;
    private final HomeLoop homeLoop;
    private final HandshakeFailures failures;
    private final ServerTlsContext tls;
    private final AccessControl access;
    private final SessionRegistry pairs;
    /** Whether the node is draining: upgrades are refused while it is. */
    private final Draining draining;
    /** What senders' limits have cost, across reloads. */
    private final SendBrakes.Counts brakeCounts;
    /** What the configuration makes of each new connection; replaced whole by a reload. */
    private volatile Assembly current;

    /** The parts of the pipeline that follow from the configuration, built once per configuration. */
    private record Assembly(ServerConfig config, RouteParser routes, Map<String, HttpEndpoint> endpoints,
                            WebSocketServerProtocolConfig wsConfig, AdminGuard adminGuard, UpgradeAdmission upgrades,
                            ProtocolSwap protocolSwap, SendBrakes brakes, IngestTail ingestTail) {
    }

    /**
     * @param limiter counts connections against the connection limits
     * @param failures counts refused upgrades for {@code /metrics}
     * @param loops    the event loops connections are served on, for {@link HomeLoop}
     * @param pairs    the 1:1 sessions' hosts and waiting sessions
     * @param draining whether the node is draining (upgrades refused)
     */
    public CrossbarInitializer(ServerConfig config, Router router, ChannelGroup sessions,
                               Map<String, HttpEndpoint> endpoints, ConnectionLimiter limiter,
                               HandshakeFailures failures, ServerTlsContext tls, AccessControl access,
                               List<EventLoop> loops, SessionRegistry pairs, Draining draining,
                               SendBrakes.Counts brakeCounts) {
        this.failures = requireNonNull(failures, "failures");
        this.tls = tls;
        this.access = access;
        this.router = requireNonNull(router, "router");
        this.sessions = requireNonNull(sessions, "sessions");
        this.pairs = requireNonNull(pairs, "pairs");
        this.draining = requireNonNull(draining, "draining");
        this.brakeCounts = requireNonNull(brakeCounts, "brakeCounts");
        this.admission = new AddressAdmission(limiter, config.maxConnectionRatePerAddress());
        this.guard = new ConnectionGuard(admission, true);
        this.proxiedGuard = new ConnectionGuard(admission, false);
        this.homeLoop = loops.size() > 1 && config.homeLoopMembers() > 0
                ? new HomeLoop(loops, router.topics(), config.homeLoopMembers(),
                        IDLE, this::idleTimer) : null;
        reconfigure(config, endpoints);
    }

    /**
     * Assembles connections from now on after {@code config} (a reload): those already open keep
     * their pipelines. What cannot change without a restart (the loops, TLS, whether tokens are
     * checked) stays as the relay started.
     */
    public void reconfigure(ServerConfig config, Map<String, HttpEndpoint> endpoints) {
        requireNonNull(config, "config");
        admission.rate(config.maxConnectionRatePerAddress());
        AdminGuard adminGuard = access == null || access.config().adminPaths().isEmpty()
                ? null : new AdminGuard(access, access.config().adminPaths());
        SendBrakes brakes = new SendBrakes(config.defaultSendLimits(), brakeCounts);
        current = new Assembly(config, new RouteParser(config.maxPathLength()), Map.copyOf(endpoints),
                WebSocketProtocol.config(config.subprotocols(), config.handshakeTimeout(), config.maxMessageBytes()),
                adminGuard, draining.admission(new SessionGate(pairs, config.routing(), sessions)),
                new ProtocolSwap(config.maxMessageBytes()), brakes, p -> fitIngest(p, config, brakes));
    }

    /** The tail of an HTTP ingest connection, fitted by the {@link IngestGate} in place of the WebSocket one. */
    private void fitIngest(ChannelPipeline p, ServerConfig config, SendBrakes brakes) {
        if (access != null) {
            p.addLast("ingest-access", new IngestAccess(access));
        }
        p.addLast("ingest", new IngestSession(router, sessions, config.ingestMessageBytes(), config.maxMessageBytes(),
                ConnectionLifecycle.missedPingsBeforeClose(config.pingInterval(), config.idleTimeout()), brakes));
    }

    /** Fires the reader-idle events the session pings on; a fresh one per channel (and per move). */
    private ChannelHandler idleTimer() {
        return new ReadIdleTimer(current.config().pingInterval().toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    protected void initChannel(Channel ch) {
        Assembly a = current;
        ServerConfig config = a.config();
        // Here, not as the bootstrap's option, so that a reload's queue bound reaches new connections.
        ch.config().setWriteBufferWaterMark(
                new WriteBufferWaterMark(config.maxClientQueueBytes() / 2, config.maxClientQueueBytes()));
        int missedPings = ConnectionLifecycle.missedPingsBeforeClose(config.pingInterval(), config.idleTimeout());
        ChannelPipeline p = ch.pipeline();
        // Behind a trusted proxy the client's address is known only once the proxy has said it.
        boolean proxied = config.proxyProtocol() || (config.trustedProxies().any()
                && ch.remoteAddress() instanceof InetSocketAddress peer && config.trustedProxies().trusts(peer.getAddress()));
        p.addLast("limits", proxied ? proxiedGuard : guard);
        if (config.proxyProtocol()) {
            p.addLast("proxy-protocol", new HAProxyMessageDecoder());
            p.addLast("proxy-header", new ProxyHeader(config.trustedProxies(), admission));
        }
        if (tls != null) {
            p.addLast("tls-port", new TlsPort(tls));
            p.addLast("tls-errors", TlsErrors.INSTANCE);
        }
        p.addLast("handshake-timeout", new HandshakeTimeout(config.handshakeTimeout().toMillis(), failures));
        p.addLast(IDLE, new ReadIdleTimer(config.pingInterval().toMillis(), TimeUnit.MILLISECONDS));
        p.addLast("http-codec", new HttpServerCodec(MAX_UPGRADE_REQUEST_BYTES, MAX_HEADER_BYTES, 8192));
        if (proxied && !config.proxyProtocol()) {
            p.addLast("forwarded-client", new ForwardedClient(config.trustedProxies(), admission));
        }
        p.addLast("ingest-gate", new IngestGate(a.routes(), failures, config.trustForwardedFor(),
                Set.copyOf(config.allowedOrigins()), router.topics(), draining, a.ingestTail()));
        p.addLast("http-aggregator", new HttpObjectAggregator(MAX_UPGRADE_REQUEST_BYTES));
        p.addLast("keep-alive", new HttpKeepAlive(config.httpIdleTimeout().toMillis()));
        if (a.adminGuard() != null) {
            p.addLast("admin-guard", a.adminGuard());
        }
        p.addLast("upgrade-gate", new UpgradeGate(a.routes(), a.endpoints(), failures, config.trustForwardedFor(),
                Set.copyOf(config.allowedOrigins()), router.topics(), a.upgrades()));
        if (access != null) {
            p.addLast("auth-gate", new AuthGate(access, config.handshakeTimeout().toMillis()));
        }
        if (homeLoop != null) {
            p.addLast("home-loop", homeLoop);
        }
        p.addLast("ws-protocol", new WebSocketServerProtocolHandler(a.wsConfig()));
        p.addLast("lifecycle", new ConnectionLifecycle(missedPings));
        p.addLast("protocol-swap", a.protocolSwap());
        if (access != null) {
            p.addLast("access", new AccessEnforcer(access));
        }
        p.addLast("session", new RelaySession(router, sessions, config.maxClientQueueBytes(),
                config.maxClientBacklogBytes(), config.clientStallTimeout().toNanos(), config.slowConsumerPolicy(),
                config.slowConsumerGrace().toMillis(), config.latencySendBuffer(), config.backpressureTimeout().toNanos(),
                config.maxLosslessBacklogBytes(), a.brakes()));
    }
}
