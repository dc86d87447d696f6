package dev.crossbar.bench.load;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.ServerConfig;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.util.List;

/**
 * Crossbar started in this JVM on 127.0.0.1 and an ephemeral port. Convenient and used by the
 * smoke tests, but the relay and the load share one process, so its CPU cannot be told apart.
 */
final class InProcessRelay implements Relay {

    private final CrossbarServer server;

    InProcessRelay(int eventLoops) {
        this(eventLoops, SlowPolicy.DROP, SlowPolicy.ALL_STREAMS);
    }

    /** With {@link SlowPolicy#BACKPRESSURE}, the streams {@code pattern} matches under its rule; otherwise none. */
    InProcessRelay(int eventLoops, SlowPolicy slow, String pattern) {
        String rule = slow.rule(pattern);
        this.server = CrossbarServer.start(ServerConfig.builder()
                .listen("127.0.0.1:0")
                .eventLoops(eventLoops)
                .routing(rule == null ? RoutingTable.EMPTY : new RoutingTable(RoutingTable.parseAll(List.of(rule))))
                .build());
    }

    @Override
    public URI baseUri() {
        return URI.create("ws://127.0.0.1:" + server.port());
    }

    @Override
    public long pid() {
        return -1;
    }

    @Override
    public String kind() {
        return "in-process";
    }

    /** Whole-process heap (relay and load generator together): an upper bound for the relay's. */
    @Override
    public long liveHeapBytes() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    CrossbarServer server() {
        return server;
    }

    @Override
    public void close() {
        server.close();
    }
}
