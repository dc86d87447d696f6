package dev.crossbar.server;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.broker.Broker;
import dev.crossbar.core.relay.RelayBuffers;
import dev.crossbar.core.topic.Router;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.admin.DisconnectBroadcast;
import dev.crossbar.server.admin.DisconnectEndpoint;
import dev.crossbar.server.admin.DrainEndpoint;
import dev.crossbar.server.admin.LiveConnections;
import dev.crossbar.server.admin.ReloadEndpoint;
import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.auth.AccessControl;
import dev.crossbar.server.auth.AccessMetrics;
import dev.crossbar.server.auth.AdminAuthority;
import dev.crossbar.server.auth.AdminGuard;
import dev.crossbar.server.auth.LiveRevocations;
import dev.crossbar.server.auth.RevocationFile;
import dev.crossbar.server.auth.RevocationStore;
import dev.crossbar.server.auth.RevokeEndpoint;
import dev.crossbar.server.cluster.NatsAdminLink;
import dev.crossbar.server.cluster.NatsBroker;
import dev.crossbar.server.cluster.NatsMetrics;
import dev.crossbar.server.cluster.NatsSessionLink;
import dev.crossbar.server.cluster.NatsStatsLink;
import dev.crossbar.server.config.ConfigSource;
import dev.crossbar.server.config.Reloaded;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.health.LoopHealth;
import dev.crossbar.server.health.LoopHealthMetrics;
import dev.crossbar.server.http.Draining;
import dev.crossbar.server.http.HandshakeFailures;
import dev.crossbar.server.http.HealthEndpoint;
import dev.crossbar.server.http.HttpEndpoint;
import dev.crossbar.server.http.ServedElsewhereEndpoint;
import dev.crossbar.server.logging.Logs;
import dev.crossbar.server.metrics.MetricsEndpoint;
import dev.crossbar.server.metrics.RelayMetrics;
import dev.crossbar.server.pair.SessionMetrics;
import dev.crossbar.server.pair.SessionRegistry;
import dev.crossbar.server.pair.SessionStatistics;
import dev.crossbar.server.session.IngestSession;
import dev.crossbar.server.session.SendBrakes;
import dev.crossbar.server.stats.ClientDetails;
import dev.crossbar.server.stats.StatsPageEndpoint;
import dev.crossbar.server.stats.StatsService;
import dev.crossbar.server.stats.StatsSocketEndpoint;
import dev.crossbar.server.tls.ServerTlsContext;
import dev.crossbar.server.transport.AdminInitializer;
import dev.crossbar.server.transport.ConnectionLimiter;
import dev.crossbar.server.transport.CrossbarInitializer;
import dev.crossbar.server.transport.RelayLoops;
import dev.crossbar.server.transport.Transport;
import dev.crossbar.server.websocket.CloseCodes;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running relay: event loops, the listening socket, the topic registry and the router. Start it
 * with {@link #start}; {@link #close} stops accepting, sends 1001 to every client and waits for
 * them to go, up to the configured grace.
 */
public final class CrossbarServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(CrossbarServer.class);

    /** The configuration connections and topics get from now on; replaced by {@link #reload}. */
    private volatile ServerConfig config;
    /** Where {@link #reload} reads the configuration again. */
    private final ConfigSource source;
    /** Assembles new connections; told of a reload. */
    private CrossbarInitializer connections;
    /** Assembles new connections to the admin address, if any; told of a reload. */
    private AdminInitializer adminConnections;
    private final RelayLoops loops;
    private final Transport transport;
    private final EventLoopGroup bossGroup;
    private final EventLoopGroup workerGroup;
    /** The cluster link, or null for a node on its own. */
    private final NatsBroker cluster;
    private final TopicRegistry topics;
    private final ConnectionLimiter limiter;
    /** What senders' rate and bandwidth limits have cost, for /metrics. */
    private final SendBrakes.Counts brakeCounts = new SendBrakes.Counts();
    private final Router router;
    private final ChannelGroup sessions = new DefaultChannelGroup("sessions", GlobalEventExecutor.INSTANCE);
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Whether the node drains before a restart: upgrades refused, {@code /healthz} says so. */
    private final Draining draining = new Draining();
    /** The drain once started ({@link #drain}), or null. */
    private CompletableFuture<Void> drained;
    /** What follows a drain asked for over HTTP: by default the relay closes; the command line exits. */
    private volatile Runnable afterDrain = this::close;
    private final HandshakeFailures handshakeFailures = new HandshakeFailures();
    /** Statistics snapshots and metric scrapes run here, never on an event loop. */
    private final EventExecutor adminExecutor = new DefaultEventExecutor(new DefaultThreadFactory("crossbar-admin", true));
    private final StatsService stats;
    private final RelayMetrics metrics;
    /** Probes through the fan-out to every event loop, for /healthz and /metrics. */
    private final LoopHealth loopHealth;
    private Channel serverChannel;
    private Channel adminChannel;
    /** The served certificate, or null without TLS. */
    private ServerTlsContext tls;
    /** Token checks and revocations, or null when access control is off. */
    private final AccessControl access;
    /** 1:1 sessions: hosts and sessions waiting for them. */
    private final SessionRegistry pairs;
    /** Revocations and disconnects across nodes, or null for a node on its own. */
    private final NatsAdminLink adminLink;
    /** Where disconnects reach the other nodes. */
    private final DisconnectBroadcast disconnects;
    /** Sessions across nodes, or null for a node on its own. */
    private NatsSessionLink sessionLink;

    private CrossbarServer(ServerConfig config, ConfigSource source) {
        this.config = config;
        this.source = requireNonNull(source, "source");
        Audit.configure(config.nodeName(), config.auditFullAddresses());
        // First: invalid cluster options fail here, before any thread exists.
        this.cluster = config.nats() == null ? null
                : new NatsBroker(config.nats(), config.nodeName(), config.maxMessageBytes());
        this.loops = RelayLoops.open(config.preferNativeTransport(), config.eventLoops());
        this.transport = loops.transport();
        this.bossGroup = loops.accept();
        this.workerGroup = loops.io();
        this.topics = new TopicRegistry(config.maxTopics(), cluster == null ? Broker.LOCAL : cluster,
                config.routing(), config.replayLimits());
        this.limiter = new ConnectionLimiter(config.maxConnections(), config.maxConnectionsPerAddress());
        this.router = new Router(topics, config.maxLoopBacklogBytes());
        this.pairs = new SessionRegistry(config.sessions());
        this.stats = new StatsService(topics, config.statsInterval(), adminExecutor, config.nodeName(),
                cluster == null ? null : new NatsStatsLink(cluster, config.nodeName(), adminExecutor,
                        config.statsClusterMaxReplyBytes()),
                config.statsClusterTimeout(), new SessionStatistics(pairs));
        this.metrics = new RelayMetrics(topics, router, handshakeFailures, workerGroup, stats::sockets);
        this.loopHealth = new LoopHealth(router.fanOut(), eventLoops(), config.healthProbeInterval(),
                config.healthMaxProbeAge(), adminExecutor);
        metrics.bind(new LoopHealthMetrics(loopHealth));
        metrics.bindLimits(limiter::maxTotal, topics::maxTopics);
        this.access = config.auth().enabled()
                ? new AccessControl(config.auth(), config.maxPathLength(), config.routing()) : null;
        RevocationStore local = config.auth().revocationFile() != null
                ? new RevocationFile(config.auth().revocationFile()) : RevocationStore.MEMORY;
        this.adminLink = cluster == null ? null : new NatsAdminLink(config.nats(), config.nodeName(), local,
                config.auth().enabled());
        this.disconnects = adminLink != null ? adminLink : DisconnectBroadcast.NONE;
        if (access != null) {
            access.store(adminLink != null ? adminLink : local);
            metrics.bind(new AccessMetrics(access));
            if (access.remoteKeys() != null) {
                metrics.bind(access.remoteKeys());
            }
        }
        metrics.bind(new SessionMetrics(pairs));
        metrics.bind(brakeCounts);
    }

    /**
     * Binds and starts serving.
     *
     * @throws StartException with one line saying why (address in use, unknown host, ...)
     */
    public static CrossbarServer start(ServerConfig config) {
        return start(config, ConfigSource.fixed(config));
    }

    /**
     * As {@link #start(ServerConfig)}; {@link #reload} reads the configuration again from {@code source}.
     *
     * @throws StartException with one line saying why (address in use, unknown host, ...)
     */
    public static CrossbarServer start(ServerConfig config, ConfigSource source) {
        requireNonNull(config, "config");
        CrossbarServer server;
        try {
            server = new CrossbarServer(config, source);
        } catch (IllegalArgumentException e) {
            throw new StartException(e.getMessage(), e);
        }
        try {
            server.bind();
        } catch (RuntimeException e) {
            if (server.cluster != null) {
                server.cluster.close();
            }
            server.shutdownThreads();
            throw e;
        }
        return server;
    }

    private void bind() {
        stats.start();
        loopHealth.start();
        Map<String, HttpEndpoint> admin = adminEndpoints(config);
        Map<String, HttpEndpoint> endpoints = endpoints(config, admin);
        if (config.tls().enabled()) {
            try {
                tls = ServerTlsContext.start(config.tls());
            } catch (IllegalStateException e) {
                throw new StartException(e.getMessage(), e);
            }
        }
        if (cluster != null) {
            metrics.bind(new NatsMetrics(cluster));
            cluster.start(router);
        }
        disconnects.listen(d -> LiveConnections.close(sessions, d));
        try {
            if (access != null) {
                // Each revocation the store holds or hears of (another node's, or one kept from before a
                // restart): refused from now on, and this node's connections that used it closed.
                access.store().start(r -> {
                    if (!access.listed(r)) {
                        log.warn("Revocation list full (--auth-max-revocations); jti={} sid={} not refused here",
                                r.jti(), r.sid());
                    }
                    LiveRevocations.end(sessions, r);
                });
            } else if (adminLink != null) {
                adminLink.start(r -> { });
            }
        } catch (java.io.UncheckedIOException e) {
            throw new StartException(e.getMessage(), e);
        }

        ServerBootstrap b = new ServerBootstrap()
                .group(bossGroup, workerGroup)
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                // The relay's one buffer policy (RelayBuffers): every channel's reads and writes from one pool.
                .option(ChannelOption.ALLOCATOR, RelayBuffers.ALLOCATOR)
                .childOption(ChannelOption.ALLOCATOR, RelayBuffers.ALLOCATOR)
                .childHandler(connections = new CrossbarInitializer(config, router, sessions, endpoints, limiter,
                        handshakeFailures, tls, access, eventLoops(), pairs, draining, brakeCounts));

        InetSocketAddress address = resolve(config.listen());
        try {
            serverChannel = b.bind(address).syncUninterruptibly().channel();
        } catch (Exception e) {
            throw new StartException("cannot listen on " + describe(config.listen()) + ": " + e.getMessage(), e);
        }
        if (config.adminListen() != null) {
            bindAdmin(admin);
        }
        // One line that says where to look: statistics, metrics and health, on the admin address if any.
        String look = adminChannel != null ? url("http", (InetSocketAddress) adminChannel.localAddress())
                : url(tls != null ? "https" : "http", localAddress());
        log.info("Crossbar listening on {} ({} transport, {} event loops, max message {} bytes); "
                        + "statistics {}/stats, metrics {}/metrics, health {}/healthz",
                describe(localAddress()), transport.name(), config.eventLoops(), config.maxMessageBytes(),
                look, look, look);
        startSessionLink();
        if (tls != null) {
            log.info("TLS on ({}): wss:// and https:// only; certificate {} expires {}", tls.providerName(),
                    tls.certificate().getSubjectX500Principal().getName(), tls.certificate().getNotAfter().toInstant());
        }
        if (access != null) {
            log.info("Access control on: {}; revocations kept in {}", config.auth(), access.store().describe());
        }
    }

    /** The reserved paths of the admin plane: health, statistics, metrics. */
    private Map<String, HttpEndpoint> adminEndpoints(ServerConfig config) {
        Map<String, HttpEndpoint> admin = new LinkedHashMap<>();
        admin.put(HealthEndpoint.PATH, new HealthEndpoint(this::unhealthyReason, draining::isDraining));
        admin.put(StatsPageEndpoint.PATH, StatsPageEndpoint.INSTANCE);
        admin.put(StatsSocketEndpoint.PATH, new StatsSocketEndpoint(stats, config, this::clientDetails));
        admin.put(MetricsEndpoint.PATH, new MetricsEndpoint(metrics, adminExecutor));
        return admin;
    }

    /**
     * The reserved paths of the main address: the admin plane's (or, with an admin address, a
     * pointer there: still reserved, never a topic) and the administrator's actions.
     */
    private Map<String, HttpEndpoint> endpoints(ServerConfig config, Map<String, HttpEndpoint> admin) {
        Map<String, HttpEndpoint> endpoints = new LinkedHashMap<>(admin);
        if (config.adminListen() != null) {
            endpoints.replaceAll((path, e) -> path.equals(HealthEndpoint.PATH) ? e : ServedElsewhereEndpoint.INSTANCE);
        }
        if (access != null) {
            endpoints.put(RevokeEndpoint.PATH, new RevokeEndpoint(access, sessions, adminExecutor));
        }
        AdminAuthority authority = new AdminAuthority(access);
        endpoints.put(DisconnectEndpoint.PATH, new DisconnectEndpoint(authority, sessions, disconnects));
        endpoints.put(ReloadEndpoint.PATH, new ReloadEndpoint(authority, this::reload, adminExecutor));
        endpoints.put(DrainEndpoint.PATH, new DrainEndpoint(authority, () -> {
            drain(this.config.drainTimeout()).thenRun(() -> afterDrain.run());
            return sessions.size();
        }));
        return endpoints;
    }

    /**
     * Reads the configuration again ({@code SIGHUP}, {@code POST /admin/reload}) and applies it to
     * connections and topics from now on: routes (for topics created from now on; live topics keep
     * theirs until they are empty), keys, limits, privacy, timeouts. Nobody is disconnected. A
     * configuration that is invalid, or that changes what needs a restart ({@link RestartOnly}), is
     * refused whole and the running one kept. The TLS certificate is read again too.
     *
     * @return one line saying what happened, for the log and the administrator
     */
    public synchronized Reloaded reload() {
        if (tls != null) {
            tls.reload();
        }
        ServerConfig next;
        try {
            next = source.load();
        } catch (IllegalArgumentException e) {
            log.warn("Configuration not reloaded, the running one is kept: {}", e.getMessage());
            return new Reloaded(false, e.getMessage());
        }
        List<String> restart = RestartOnly.changed(config, next);
        if (!restart.isEmpty()) {
            String why = String.join(", ", restart) + ": cannot change without a restart";
            log.warn("Configuration not reloaded, the running one is kept: {}", why);
            return new Reloaded(false, why);
        }
        limiter.limits(next.maxConnections(), next.maxConnectionsPerAddress());
        topics.reconfigure(next.maxTopics(), next.routing());
        if (access != null) {
            access.reconfigure(next.auth(), next.maxPathLength(), next.routing());
        }
        pairs.reconfigure(next.sessions());
        Logs.configure(next.logFormat(), next.logLevel(), next.auditLog());
        Audit.configure(next.nodeName(), next.auditFullAddresses());
        config = next;
        Map<String, HttpEndpoint> admin = adminEndpoints(next);
        connections.reconfigure(next, endpoints(next, admin));
        if (adminConnections != null) {
            adminConnections.reconfigure(next, admin);
        }
        log.info("Configuration reloaded: new connections and topics follow it; {} connections keep theirs",
                sessions.size());
        return new Reloaded(true, "applied");
    }

    /**
     * Drains the node before a restart ({@link Drain}): upgrades refused, {@code /healthz} draining,
     * clients closed with 1012, lossless streams let finish within {@code timeout}. The future
     * completes when every client has gone or the time is up; the relay keeps listening (for
     * health checks) until {@link #close}. A second call returns the first drain.
     */
    public synchronized CompletableFuture<Void> drain(Duration timeout) {
        if (drained == null) {
            drained = new Drain(sessions, draining, adminExecutor).start(timeout);
        }
        return drained;
    }

    /** What a drain asked for over HTTP ({@code POST /admin/drain}) does once it is over; by default {@link #close}. */
    public void afterDrain(Runnable action) {
        this.afterDrain = requireNonNull(action, "action");
    }

    /** {@code scheme://host:port} for a bound address; a wildcard address is shown as localhost. */
    private static String url(String scheme, InetSocketAddress a) {
        String host = a.getAddress() != null && a.getAddress().isAnyLocalAddress() ? "localhost"
                : a.getAddress() instanceof java.net.Inet6Address ? "[" + a.getHostString() + "]" : a.getHostString();
        return scheme + "://" + host + ":" + a.getPort();
    }

    /** Null while healthy; otherwise why /healthz answers 503: stuck event loops, then the cluster link. */
    private String unhealthyReason() {
        String loops = loopHealth.stuckReason();
        String link = cluster == null ? null : cluster.degradedReason();
        if (loops == null) {
            return link;
        }
        return link == null ? loops : loops + "; " + link;
    }

    /**
     * What a stats reader may see of each client: everything under {@code --stats-full-client-details}
     * or with an admin token (header or {@code ?token=}), else addresses and user agents truncated.
     */
    private ClientDetails clientDetails(HttpRequest request) {
        return config.statsFullClientDetails() || (access != null && AdminGuard.holdsAdmin(request, access))
                ? ClientDetails.FULL : ClientDetails.TRUNCATED;
    }

    /**
     * In a cluster with session streams: the link that offers clients here to hosts on other nodes,
     * who open the session at this node's URL ({@code --session-url}, else the listen address).
     */
    private void startSessionLink() {
        if (cluster == null || !config.routing().hasSessions()) {
            return;
        }
        String url = config.sessions().url();
        if (url == null) {
            InetSocketAddress a = localAddress();
            if (a.getAddress() != null && a.getAddress().isAnyLocalAddress()) {
                log.warn("Sessions stay on this node: listening on every address, it cannot tell hosts on other "
                        + "nodes where to reach it; set --session-url");
                return;
            }
            url = (tls != null ? "wss://" : "ws://") + (a.getAddress() instanceof java.net.Inet6Address
                    ? "[" + a.getHostString() + "]" : a.getHostString()) + ":" + a.getPort();
        }
        sessionLink = new NatsSessionLink(config.nats(), config.nodeName(), url, pairs);
        pairs.link(sessionLink);
        sessionLink.start();
    }

    /** The worker group's loops, in order: those connections are served on. */
    public List<EventLoop> eventLoops() {
        List<EventLoop> loops = new ArrayList<>();
        for (EventExecutor e : workerGroup) {
            loops.add((EventLoop) e);
        }
        return loops;
    }

    private void bindAdmin(Map<String, HttpEndpoint> admin) {
        ServerBootstrap b = new ServerBootstrap()
                .group(bossGroup, workerGroup)
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(adminConnections = new AdminInitializer(config, admin, handshakeFailures, access));
        InetSocketAddress address = resolve(config.adminListen());
        try {
            adminChannel = b.bind(address).syncUninterruptibly().channel();
        } catch (Exception e) {
            throw new StartException("cannot listen on admin address " + describe(config.adminListen()) + ": "
                    + e.getMessage(), e);
        }
    }

    private static InetSocketAddress resolve(InetSocketAddress listen) {
        if (!listen.isUnresolved()) {
            return listen;
        }
        InetSocketAddress resolved = new InetSocketAddress(listen.getHostString(), listen.getPort());
        if (resolved.isUnresolved()) {
            throw new StartException("cannot listen on " + describe(listen) + ": unknown host", null);
        }
        return resolved;
    }

    private static String describe(InetSocketAddress a) {
        return a.getHostString() + ":" + a.getPort();
    }

    public ServerConfig config() {
        return config;
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    public int port() {
        return localAddress().getPort();
    }

    public TopicRegistry topics() {
        return topics;
    }

    public Router router() {
        return router;
    }

    /** Open TCP connections counted against the connection limits (WebSocket or not). */
    public int openConnections() {
        return limiter.open();
    }

    /** The admin address actually bound, or null if statistics are served on the main address. */
    public InetSocketAddress adminAddress() {
        return adminChannel == null ? null : (InetSocketAddress) adminChannel.localAddress();
    }

    public StatsService stats() {
        return stats;
    }

    public RelayMetrics metrics() {
        return metrics;
    }

    public HandshakeFailures handshakeFailures() {
        return handshakeFailures;
    }

    /** 1:1 sessions ({@code schema=session} streams): hosts, waiting and open sessions. */
    public SessionRegistry pairs() {
        return pairs;
    }

    /** Access control, or null when tokens are off. */
    public AccessControl access() {
        return access;
    }

    /** The served TLS certificate, or null without TLS. */
    public ServerTlsContext tls() {
        return tls;
    }

    /** Reloads the TLS certificate now (SIGHUP); live connections keep theirs. False if none or it failed. */
    public boolean reloadTls() {
        return tls != null && tls.reload();
    }

    /** The cluster link, or null when this node runs on its own. */
    public NatsBroker cluster() {
        return cluster;
    }

    /** Live relay connections: WebSocket clients and HTTP ingest posters. */
    public int connections() {
        return sessions.size();
    }

    /** Stops accepting, closes every client with 1001 and waits for them, within the shutdown grace. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        long graceMillis = config.shutdownGrace().toMillis();
        serverChannel.close().syncUninterruptibly();
        if (adminChannel != null) {
            adminChannel.close().syncUninterruptibly();
        }
        stats.close();
        loopHealth.close();
        int open = sessions.size();
        // Close frames first; clients answer with theirs and Netty then closes each channel.
        // Closing the sockets ourselves right away would reset clients that are still sending.
        for (Channel ch : sessions) {
            // A channel closing right now may have no pipeline left; it needs no close frame.
            ConnectionLifecycle lifecycle = ch.pipeline().get(ConnectionLifecycle.class);
            if (lifecycle != null) {
                lifecycle.close(CloseCodes.GOING_AWAY, "relay shutting down");
            } else {
                // An HTTP ingest's poster is answered 503 rather than cut off.
                IngestSession ingest = ch.pipeline().get(IngestSession.class);
                if (ingest != null) {
                    ingest.shutDown();
                }
            }
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(graceMillis);
        while (!sessions.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        sessions.close().awaitUninterruptibly(1, TimeUnit.SECONDS);
        if (sessionLink != null) {
            sessionLink.close();
        }
        if (adminLink != null) {
            adminLink.close();
        }
        if (cluster != null) {
            cluster.close();
        }
        shutdownThreads();
        log.info("Crossbar stopped ({} clients closed)", open);
    }

    private void shutdownThreads() {
        if (access != null) {
            access.close();
        }
        if (tls != null) {
            tls.close();
        }
        adminExecutor.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        loops.close();
        adminExecutor.terminationFuture().awaitUninterruptibly(2, TimeUnit.SECONDS);
        metrics.close();
    }

    /** The relay could not start; the message is one line fit for stderr. */
    public static final class StartException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StartException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
