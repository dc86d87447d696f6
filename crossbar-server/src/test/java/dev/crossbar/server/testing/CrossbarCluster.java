package dev.crossbar.server.testing;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.cluster.NatsBroker;
import dev.crossbar.server.config.NatsConfig;
import dev.crossbar.server.config.ServerConfig;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.BiFunction;
import java.util.function.UnaryOperator;

/**
 * A three-server NATS cluster and three in-process Crossbar nodes ({@code node-a}, {@code node-b},
 * {@code node-c}), node {@code i} connected to NATS server {@code i} only. {@link #close()} stops the
 * nodes, then kills the NATS processes.
 */
public final class CrossbarCluster implements AutoCloseable {

    public static final int NODES = 3;

    public final NatsCluster nats;
    private final CrossbarServer[] nodes = new CrossbarServer[NODES];
    private final ServerConfig[] configs = new ServerConfig[NODES];

    private CrossbarCluster(NatsCluster nats) {
        this.nats = nats;
    }

    /**
     * Starts everything and waits until each node is connected.
     *
     * @param configure adjusts node {@code i}'s configuration (listen, NATS server and name are set)
     */
    public static CrossbarCluster start(Path dir, BiFunction<Integer, ServerConfig.Builder, ServerConfig.Builder> configure) {
        return start(dir, configure, UnaryOperator.identity());
    }

    /** As above, also adjusting every node's NATS settings (the server URL is set). */
    public static CrossbarCluster start(Path dir, BiFunction<Integer, ServerConfig.Builder, ServerConfig.Builder> configure,
                                        UnaryOperator<NatsConfig.Builder> natsConfigure) {
        return start(dir, configure, (i, n) -> natsConfigure.apply(n));
    }

    /** As above, adjusting node {@code i}'s NATS settings (the server URL is set). */
    public static CrossbarCluster start(Path dir, BiFunction<Integer, ServerConfig.Builder, ServerConfig.Builder> configure,
                                        BiFunction<Integer, NatsConfig.Builder, NatsConfig.Builder> natsConfigure) {
        return start(NatsCluster.start(dir, NODES), configure, natsConfigure);
    }

    /** Three nodes on {@code nats} (started already, e.g. with JetStream), node {@code i} on its server {@code i}. */
    public static CrossbarCluster start(NatsCluster nats, BiFunction<Integer, ServerConfig.Builder, ServerConfig.Builder> configure,
                                        BiFunction<Integer, NatsConfig.Builder, NatsConfig.Builder> natsConfigure) {
        CrossbarCluster c = new CrossbarCluster(nats);
        try {
            for (int i = 0; i < NODES; i++) {
                ServerConfig.Builder b = ServerConfig.builder()
                        .listen("127.0.0.1:0")
                        .eventLoops(2)
                        .shutdownGrace(Duration.ofSeconds(1))
                        .nodeName(name(i))
                        .nats(natsConfigure.apply(i, NatsConfig.builder().servers(nats.url(i))).build());
                c.configs[i] = configure.apply(i, b).build();
                c.nodes[i] = CrossbarServer.start(c.configs[i]);
            }
            for (int i = 0; i < NODES; i++) {
                NatsBroker broker = c.nodes[i].cluster();
                RelayServerExtension.await(name(i) + " connected to NATS", Duration.ofSeconds(10),
                        () -> broker.state() == NatsBroker.State.CONNECTED);
            }
            return c;
        } catch (RuntimeException | Error e) {
            c.close();
            throw e;
        }
    }

    public static CrossbarCluster start(Path dir) {
        return start(dir, (i, b) -> b);
    }

    public static String name(int i) {
        return "node-" + (char) ('a' + i);
    }

    public CrossbarServer node(int i) {
        return nodes[i];
    }

    /** Stops node {@code i} (its NATS server goes on), as an operator or a crash would. */
    public void stop(int i) {
        nodes[i].close();
    }

    /** Starts node {@code i} again with its configuration (on a new port) and waits until it is connected. */
    public void restart(int i) {
        nodes[i] = CrossbarServer.start(configs[i]);
        NatsBroker broker = nodes[i].cluster();
        RelayServerExtension.await(name(i) + " connected to NATS", Duration.ofSeconds(10),
                () -> broker.state() == NatsBroker.State.CONNECTED);
    }

    public NatsBroker broker(int i) {
        return nodes[i].cluster();
    }

    /** The WebSocket URI of {@code path} on node {@code i}; characters outside RFC 3986's unreserved set are percent-encoded. */
    public URI ws(int i, String path) {
        return URI.create("ws://127.0.0.1:" + nodes[i].port() + encodePath(path));
    }

    public URI http(int i, String path) {
        return URI.create("http://127.0.0.1:" + nodes[i].port() + path);
    }

    public static String encodePath(String path) {
        StringBuilder out = new StringBuilder();
        for (byte b : path.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xFF;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~/".indexOf(c) >= 0) {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
            }
        }
        return out.toString();
    }

    /**
     * Waits until every live NATS server holds {@code total} subscriptions (its clients' and those its
     * routes told it of): the interest of every node has reached every server, so a publish now reaches
     * every subscribed node.
     */
    public void awaitSubscriptions(int total, boolean... live) {
        for (int s = 0; s < nats.size(); s++) {
            if (live.length > s && !live[s]) {
                continue;
            }
            int server = s;
            RelayServerExtension.await("nats-server " + s + " holding " + total + " subscriptions",
                    Duration.ofSeconds(10), () -> nats.subscriptions(server) == total);
        }
    }

    @Override
    public void close() {
        try {
            for (CrossbarServer n : nodes) {
                if (n != null) {
                    n.close();
                }
            }
        } finally {
            nats.close();
        }
    }
}
