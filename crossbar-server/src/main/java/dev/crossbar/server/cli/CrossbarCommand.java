package dev.crossbar.server.cli;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.ServerConfig;
import dev.crossbar.server.SlowConsumerPolicy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code crossbar}: flags (and {@code CROSSBAR_LISTEN}) mapped onto {@link ServerConfig}. */
@Command(name = "crossbar", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        sortOptions = false, usageHelpAutoWidth = true,
        description = {"WebSocket relay for remote laboratories.",
                "Every path is a topic: N:N on /<topic>, 1:N from /in/<t> to /out/<t>."})
public final class CrossbarCommand implements Callable<Integer> {

    @Option(names = "--listen", paramLabel = "HOST:PORT",
            defaultValue = "${env:CROSSBAR_LISTEN:-" + ServerConfig.DEFAULT_LISTEN + "}",
            description = "Address to serve on (env CROSSBAR_LISTEN; default ${DEFAULT-VALUE}). Use :8080 for all interfaces.")
    String listen;

    @Option(names = "--event-loops", paramLabel = "N", description = "I/O threads (default: number of cores, ${DEFAULT-VALUE}).")
    int eventLoops = Runtime.getRuntime().availableProcessors();

    @Option(names = "--transport", paramLabel = "auto|nio", defaultValue = "auto",
            description = "auto: native epoll on Linux, else NIO; nio: always NIO (default ${DEFAULT-VALUE}).")
    String transport;

    @Option(names = "--max-message", paramLabel = "SIZE", converter = Units.IntBytesConverter.class,
            defaultValue = "10MiB", description = "Largest message, after reassembly of fragments; larger closes with 1009 (default ${DEFAULT-VALUE}).")
    int maxMessage;

    @Option(names = "--max-path-length", paramLabel = "N", defaultValue = "" + ServerConfig.DEFAULT_MAX_PATH_LENGTH,
            description = "Longest topic path in characters; longer is refused with 400 (default ${DEFAULT-VALUE}).")
    int maxPathLength;

    @Option(names = "--subprotocol", paramLabel = "NAME", split = ",", defaultValue = "null",
            description = "Subprotocols accepted and echoed; '*' accepts whatever a client offers first (default ${DEFAULT-VALUE}, as jsmpeg offers).")
    List<String> subprotocols;

    @Option(names = "--handshake-timeout", paramLabel = "DURATION", converter = Units.DurationConverter.class,
            defaultValue = "10s", description = "Close a connection that has not upgraded this long after connecting (default ${DEFAULT-VALUE}).")
    Duration handshakeTimeout;

    @Option(names = "--ping-interval", paramLabel = "DURATION", converter = Units.DurationConverter.class,
            defaultValue = "30s", description = "Ping a client this long after last hearing from it (default ${DEFAULT-VALUE}).")
    Duration pingInterval;

    @Option(names = "--idle-timeout", paramLabel = "DURATION", converter = Units.DurationConverter.class,
            defaultValue = "60s", description = "Close (1001) a client silent this long, pongs included (default ${DEFAULT-VALUE}).")
    Duration idleTimeout;

    @Option(names = "--max-client-queue", paramLabel = "SIZE", converter = Units.IntBytesConverter.class,
            defaultValue = "1MiB", description = "Bytes a client may have queued behind the message it is receiving; past that its messages are dropped whole (default ${DEFAULT-VALUE}).")
    int maxClientQueue;

    @Option(names = "--max-loop-backlog", paramLabel = "SIZE", converter = Units.BytesConverter.class,
            defaultValue = "64MiB", description = "Fan-out bytes queued for one event loop before messages are dropped (default ${DEFAULT-VALUE}).")
    long maxLoopBacklog;

    @Option(names = "--slow-consumer", paramLabel = "drop|disconnect", defaultValue = "drop",
            description = "A client over its queue: drop its messages, or also disconnect it (1013) after the grace (default ${DEFAULT-VALUE}).")
    String slowConsumer;

    @Option(names = "--slow-consumer-grace", paramLabel = "DURATION", converter = Units.DurationConverter.class,
            defaultValue = "10s", description = "How long a client may stay over its queue under 'disconnect' (default ${DEFAULT-VALUE}).")
    Duration slowConsumerGrace;

    @Option(names = "--shutdown-grace", paramLabel = "DURATION", converter = Units.DurationConverter.class,
            defaultValue = "3s", description = "On SIGTERM, how long clients get to close after 1001 (default ${DEFAULT-VALUE}).")
    Duration shutdownGrace;

    @Mixin
    ClusterOptions cluster = new ClusterOptions();

    /** Builds the config; invalid combinations throw {@link IllegalArgumentException} naming the value. */
    ServerConfig toConfig() {
        SlowConsumerPolicy policy = switch (slowConsumer.toLowerCase(java.util.Locale.ROOT)) {
            case "drop" -> SlowConsumerPolicy.DROP;
            case "disconnect" -> SlowConsumerPolicy.DISCONNECT;
            default -> throw new IllegalArgumentException("--slow-consumer: '" + slowConsumer + "' (expected: drop or disconnect)");
        };
        boolean preferNative = switch (transport.toLowerCase(java.util.Locale.ROOT)) {
            case "auto" -> true;
            case "nio" -> false;
            default -> throw new IllegalArgumentException("--transport: '" + transport + "' (expected: auto or nio)");
        };
        return ServerConfig.builder()
                .listen(listen)
                .eventLoops(eventLoops)
                .preferNativeTransport(preferNative)
                .maxMessageBytes(maxMessage)
                .maxPathLength(maxPathLength)
                .subprotocols(subprotocols)
                .handshakeTimeout(handshakeTimeout)
                .pingInterval(pingInterval)
                .idleTimeout(idleTimeout)
                .maxClientQueueBytes(maxClientQueue)
                .maxLoopBacklogBytes(maxLoopBacklog)
                .slowConsumerPolicy(policy)
                .slowConsumerGrace(slowConsumerGrace)
                .shutdownGrace(shutdownGrace)
                .nodeName(cluster.nodeName)
                .nats(cluster.toNatsConfig())
                .build();
    }

    @Override
    public Integer call() {
        ServerConfig config;
        try {
            config = toConfig();
        } catch (IllegalArgumentException e) {
            System.err.println("crossbar: " + e.getMessage());
            return 2;
        }
        CrossbarServer server;
        try {
            server = CrossbarServer.start(config);
        } catch (CrossbarServer.StartException e) {
            System.err.println("crossbar: " + e.getMessage());
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "crossbar-shutdown"));
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }
}
