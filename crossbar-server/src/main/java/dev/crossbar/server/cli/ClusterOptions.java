package dev.crossbar.server.cli;

import dev.crossbar.server.config.NatsConfig;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The flags that join this node to others through NATS (a picocli mixin of {@link CrossbarCommand}).
 * Without {@code --nats} the node runs on its own and the other NATS flags are refused. Secrets can
 * come from the environment instead of the command line, which other users of the host can read.
 */
final class ClusterOptions {

    @Option(names = "--nats", paramLabel = "URL[,URL...]", description = "NATS servers to join other Crossbar nodes through, e.g. nats://10.0.0.5:4222 (env CROSSBAR_NATS). "
                    + "Default: none, this node runs alone.")
    String servers;

    @Option(names = "--nats-user", paramLabel = "NAME", description = "NATS user name (env CROSSBAR_NATS_USER); needs --nats-password.")
    String user;

    @Option(names = "--nats-password", paramLabel = "SECRET", description = "NATS password (better: env CROSSBAR_NATS_PASSWORD). Never logged.")
    String password;

    @Option(names = "--nats-token", paramLabel = "SECRET", description = "NATS authentication token (better: env CROSSBAR_NATS_TOKEN). Never logged.")
    String token;

    @Option(names = "--nats-creds", paramLabel = "FILE",
            description = "NATS credentials file (user JWT and NKey seed), as issued by nsc.")
    Path creds;

    @Option(names = "--nats-tls", description = "Require TLS to NATS even for nats:// URLs (tls:// URLs always use it).")
    boolean tls;

    @Option(names = "--nats-tls-ca", paramLabel = "FILE",
            description = "PEM file of the CA that signed the NATS servers' certificates (implies --nats-tls); "
                    + "default: the JVM's trusted CAs.")
    Path tlsCa;

    @Option(names = "--nats-max-pending", paramLabel = "SIZE", converter = UnitConverters.BytesConverter.class,
            description = "Bytes of messages that may wait to go to NATS (and again in the client); "
                    + "past that, messages for other nodes are dropped whole and counted (default ${DEFAULT-VALUE}).")
    long maxPending;

    @Option(names = "--nats-lossless-timeout", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "slow=backpressure streams: how long messages are kept for a node that cannot "
                    + "be reached (this node's NATS link down, or the other silent); past it they are given up and the "
                    + "stream's clients closed with 4010 (default ${DEFAULT-VALUE}).")
    java.time.Duration losslessTimeout;

    @Option(names = "--node-name", paramLabel = "NAME", description = "This node's name in statistics and in NATS's connection list (default: the host name).")
    String nodeName;

    /**
     * The NATS settings, or null without {@code --nats}.
     *
     * @throws IllegalArgumentException naming the flag, when NATS flags are given without {@code --nats}
     */
    NatsConfig toNatsConfig() {
        if (servers == null || servers.isBlank()) {
            if (user != null || password != null || token != null || creds != null || tls || tlsCa != null) {
                throw new IllegalArgumentException("--nats-*: NATS options given without --nats (expected: --nats <url>)");
            }
            return null;
        }
        return NatsConfig.builder()
                .servers(servers)
                .user(user)
                .password(password)
                .token(token)
                .credsFile(creds)
                .tls(tls || tlsCa != null)
                .tlsCaFile(tlsCa)
                .maxPendingBytes(maxPending)
                .losslessTimeout(losslessTimeout)
                .build();
    }
}
