package dev.crossbar.server;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.broker.Broker;
import dev.crossbar.core.relay.Router;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.cluster.NatsBroker;
import dev.crossbar.server.http.HealthEndpoint;
import dev.crossbar.server.http.HttpEndpoint;
import dev.crossbar.server.session.CloseCodes;
import dev.crossbar.server.transport.CrossbarInitializer;
import dev.crossbar.server.transport.Transport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
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

    private final ServerConfig config;
    private final Transport transport;
    private final EventLoopGroup bossGroup;
    private final EventLoopGroup workerGroup;
    /** The cluster link, or null for a node on its own. */
    private final NatsBroker cluster;
    private final TopicRegistry topics;
    private final Router router;
    private final ChannelGroup sessions = new DefaultChannelGroup("sessions", GlobalEventExecutor.INSTANCE);
    private final AtomicBoolean closed = new AtomicBoolean();
    private Channel serverChannel;

    private CrossbarServer(ServerConfig config) {
        this.config = config;
        // First: invalid cluster options fail here, before any thread exists.
        this.cluster = config.nats() == null ? null
                : new NatsBroker(config.nats(), config.nodeName(), config.maxMessageBytes());
        this.transport = Transport.select(config.preferNativeTransport());
        this.bossGroup = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("crossbar-accept"),
                transport.ioHandlerFactory());
        this.workerGroup = new MultiThreadIoEventLoopGroup(config.eventLoops(), new DefaultThreadFactory("crossbar-io"),
                transport.ioHandlerFactory());
        this.topics = new TopicRegistry(cluster == null ? Broker.LOCAL : cluster);
        this.router = new Router(topics, config.maxLoopBacklogBytes());
    }

    /**
     * Binds and starts serving.
     *
     * @throws StartException with one line saying why (address in use, unknown host, ...)
     */
    public static CrossbarServer start(ServerConfig config) {
        requireNonNull(config, "config");
        CrossbarServer server;
        try {
            server = new CrossbarServer(config);
        } catch (IllegalArgumentException e) {
            throw new StartException(e.getMessage(), e);
        }
        try {
            server.bind();
        } catch (RuntimeException e) {
            if (server.cluster != null) {
                server.cluster.close();
            }
            server.shutdownGroups();
            throw e;
        }
        return server;
    }

    private void bind() {
        Map<String, HttpEndpoint> endpoints = new LinkedHashMap<>();
        endpoints.put(HealthEndpoint.PATH, cluster == null ? HealthEndpoint.INSTANCE
                : new HealthEndpoint(cluster::degradedReason));
        if (cluster != null) {
            cluster.start(router);
        }

        ServerBootstrap b = new ServerBootstrap()
                .group(bossGroup, workerGroup)
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK,
                        new WriteBufferWaterMark(config.maxClientQueueBytes() / 2, config.maxClientQueueBytes()))
                .childHandler(new CrossbarInitializer(config, router, sessions, endpoints));

        InetSocketAddress address = resolve(config.listen());
        try {
            serverChannel = b.bind(address).syncUninterruptibly().channel();
        } catch (Exception e) {
            throw new StartException("cannot listen on " + describe(config.listen()) + ": " + e.getMessage(), e);
        }
        log.info("Crossbar listening on {} ({} transport, {} event loops, max message {} bytes)",
                describe(localAddress()), transport.name(), config.eventLoops(), config.maxMessageBytes());
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

    /** The cluster link, or null when this node runs on its own. */
    public NatsBroker cluster() {
        return cluster;
    }

    /** Live WebSocket connections. */
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
        int open = sessions.size();
        for (Channel ch : sessions) {
            ch.writeAndFlush(new CloseWebSocketFrame(CloseCodes.GOING_AWAY, "relay shutting down"))
                    .addListener(ChannelFutureListener.CLOSE);
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
        if (cluster != null) {
            cluster.close();
        }
        shutdownGroups();
        log.info("Crossbar stopped ({} clients closed)", open);
    }

    private void shutdownGroups() {
        bossGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        workerGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        bossGroup.terminationFuture().awaitUninterruptibly(2, TimeUnit.SECONDS);
        workerGroup.terminationFuture().awaitUninterruptibly(2, TimeUnit.SECONDS);
    }

    /** The relay could not start; the message is one line fit for stderr. */
    public static final class StartException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StartException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
