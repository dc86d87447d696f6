package dev.crossbar.server.cli;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.ConfigSource;
import dev.crossbar.server.config.LogFormat;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.SlowConsumerPolicy;
import dev.crossbar.server.config.TlsConfig;
import dev.crossbar.server.config.TlsProvider;
import dev.crossbar.server.config.TrustedProxies;
import dev.crossbar.server.config.VerificationKeys;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code crossbar}: the options, mapped onto {@link ServerConfig}. Each may come from a flag, the
 * environment ({@code CROSSBAR_<OPTION>}) or the configuration file ({@code --config}); see
 * {@link ConfigSources}. Defaults come from the configuration's constants ({@link OptionDefaults}).
 */
@Command(name = "crossbar", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        defaultValueProvider = OptionDefaults.class, sortOptions = false, usageHelpAutoWidth = true,
        description = {"WebSocket relay for remote laboratories.",
                "Every path is a topic: N:N on /<topic>, 1:N from /in/<t> to /out/<t>.",
                "Every option may also be set as CROSSBAR_<OPTION> in the environment (e.g. CROSSBAR_MAX_MESSAGE)"
                        + " or as <option>: <value> in the --config file; a flag wins over the environment,"
                        + " which wins over the file."})
public final class CrossbarCommand {

    @Option(names = "--config", paramLabel = "FILE",
            description = "YAML file of options: each key an option's name without its dashes, e.g. 'listen: :8080', "
                    + "'route: [\"/cam/**:start=keyframe\"]' (env CROSSBAR_CONFIG). Re-read on SIGHUP and POST /admin/reload.")
    Path configFile;

    @Option(names = "--log-level", paramLabel = "LEVEL",
            description = "error, warn, info or debug (trace for Netty's own detail); changed by a reload (default ${DEFAULT-VALUE}).")
    String logLevel;

    @Option(names = "--log-format", paramLabel = "text|json",
            description = "One line of text per event, or one JSON object per line for a log collector (default ${DEFAULT-VALUE}).")
    String logFormat;

    @Option(names = "--audit-log", paramLabel = "FILE|-",
            description = "Write the audit trail (connects, refusals, expiries, revocations, closes, sessions, admin actions) "
                    + "to FILE as JSON lines, rotated daily and at 100MB, or '-' for the main log. Default: none.")
    String auditLog;

    @Option(names = "--audit-full-addresses",
            description = "Write whole client addresses in the audit trail (default ${DEFAULT-VALUE}: truncated to /24 or /48, as statistics show them).")
    boolean auditFullAddresses;

    @Option(names = "--print-config",
            description = "Print the effective configuration, where each value came from (secrets redacted), and exit.")
    boolean printConfig;

    @Option(names = "--listen", paramLabel = "HOST:PORT",
            description = "Address to serve on (default ${DEFAULT-VALUE}). Use :8080 for all interfaces.")
    String listen;

    @Option(names = "--event-loops", paramLabel = "N", description = "I/O threads (default: number of cores, ${DEFAULT-VALUE}).")
    int eventLoops;

    @Option(names = "--home-loop-members", paramLabel = "N", description = "A topic's first N members share one I/O thread, so a small topic's messages never cross threads"
                    + " (less CPU per message); further members go to the thread with the fewest of the topic's members. 0: off (default ${DEFAULT-VALUE}).")
    int homeLoopMembers;

    @Option(names = "--transport", paramLabel = "auto|nio", description = "auto: native epoll on Linux, else NIO; nio: always NIO (default ${DEFAULT-VALUE}).")
    String transport;

    @Option(names = "--max-message", paramLabel = "SIZE", converter = UnitConverters.IntBytesConverter.class,
            description = "Largest message, after reassembly of fragments; larger closes with 1009 (default ${DEFAULT-VALUE}).")
    int maxMessage;

    @Option(names = "--ingest-message-size", paramLabel = "SIZE", converter = UnitConverters.IntBytesConverter.class,
            description = "A camera posting MPEG-TS over HTTP (POST /in/<stream>): its body is relayed in messages of at most"
                    + " this many bytes, whole 188-byte packets, so viewers skip and start at keyframes as with a"
                    + " WebSocket camera (default ${DEFAULT-VALUE}: an eighth of a second of 1 Mbit/s video).")
    int ingestMessageSize;

    @Option(names = "--max-path-length", paramLabel = "N", description = "Longest topic path in characters; longer is refused with 400 (default ${DEFAULT-VALUE}).")
    int maxPathLength;

    @Option(names = "--subprotocol", paramLabel = "NAME", split = ",", description = "Subprotocols accepted and echoed; '*' accepts whatever a client offers first (default ${DEFAULT-VALUE}, as jsmpeg offers).")
    List<String> subprotocols;

    @Option(names = "--handshake-timeout", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "Close a connection that has not upgraded this long after connecting (default ${DEFAULT-VALUE}).")
    Duration handshakeTimeout;

    @Option(names = "--ping-interval", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "Ping a client this long after last hearing from it (default ${DEFAULT-VALUE}).")
    Duration pingInterval;

    @Option(names = "--idle-timeout", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "Close (1001) a client silent this long, pongs included (default ${DEFAULT-VALUE}).")
    Duration idleTimeout;

    @Option(names = "--http-idle-timeout", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "Close an HTTP connection kept open (keep-alive) when no request came this long after its last response (default ${DEFAULT-VALUE}).")
    Duration httpIdleTimeout;

    @Option(names = "--health-probe-interval", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "Send a probe message through the fan-out to each event loop this often (default ${DEFAULT-VALUE}).")
    Duration healthProbeInterval;

    @Option(names = "--health-max-probe-age", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "/healthz answers 503 while an event loop has left a probe undelivered this long (default ${DEFAULT-VALUE}).")
    Duration healthMaxProbeAge;

    @Option(names = "--max-client-queue", paramLabel = "SIZE", converter = UnitConverters.IntBytesConverter.class,
            description = "Bytes a client may have queued behind the message it is receiving; past that its messages are dropped whole (default ${DEFAULT-VALUE}).")
    int maxClientQueue;

    @Option(names = "--max-loop-backlog", paramLabel = "SIZE", converter = UnitConverters.BytesConverter.class,
            description = "Fan-out bytes queued for one event loop before messages are dropped (default ${DEFAULT-VALUE}).")
    long maxLoopBacklog;

    @Option(names = "--slow-consumer", paramLabel = "drop|disconnect", description = "A client over its queue: drop its messages, or also disconnect it (1013) after the grace (default ${DEFAULT-VALUE}).")
    String slowConsumer;

    @Option(names = "--slow-consumer-grace", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "How long a client may stay over its queue under 'disconnect' (default ${DEFAULT-VALUE}).")
    Duration slowConsumerGrace;

    @Option(names = "--client-stall-timeout", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "A receiver that has read nothing of its queue for this long is stalled: past "
                    + "--max-client-queue it loses messages; one still reading may queue up to twice --max-message "
                    + "(default ${DEFAULT-VALUE}).")
    Duration clientStallTimeout;

    @Option(names = "--shutdown-grace", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "On SIGTERM, how long clients get to close after 1001 (default ${DEFAULT-VALUE}).")
    Duration shutdownGrace;

    @Option(names = "--drain-timeout", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "On SIGTERM or POST /admin/drain: new connections refused, /healthz draining, clients closed "
                    + "with 1012 so they reconnect elsewhere; lossless streams get this long to finish (default ${DEFAULT-VALUE}; "
                    + "0: everyone at once).")
    Duration drainTimeout;

    @Option(names = "--max-connections", paramLabel = "N", description = "Connections at once; beyond it new ones get 503 before the upgrade (default ${DEFAULT-VALUE}).")
    int maxConnections;

    @Option(names = "--max-connections-per-address", paramLabel = "N",
            description = "Connections from one remote address; beyond it 429 (default ${DEFAULT-VALUE}).")
    int maxConnectionsPerAddress;

    @Option(names = "--max-connection-rate-per-address", paramLabel = "N",
            description = "New connections per second from one client address (bursts of N at once); beyond it 429. "
                    + "0: no limit (default ${DEFAULT-VALUE}).")
    int maxConnectionRatePerAddress;

    @Option(names = "--trusted-proxies", paramLabel = "CIDR[,CIDR...]", split = ",",
            description = "Proxies whose word on the client's address is taken: Forwarded / X-Forwarded-For from them "
                    + "(read past every trusted hop), or their PROXY header with --proxy-protocol. Limits, statistics, "
                    + "the audit trail and session offers then use the client's address. Default: none.")
    List<String> trustedProxies = List.of();

    @Option(names = "--proxy-protocol",
            description = "Every connection starts with a PROXY protocol v1/v2 header (HAProxy send-proxy, send-proxy-v2) "
                    + "from one of --trusted-proxies; others are closed (default ${DEFAULT-VALUE}).")
    boolean proxyProtocol;

    @Option(names = "--max-topics", paramLabel = "N", description = "Live topics; a connection that would create another gets 503 (default ${DEFAULT-VALUE}).")
    int maxTopics;

    @Option(names = "--allowed-origin", paramLabel = "ORIGIN", split = ",",
            description = "Browser origins allowed to connect (repeatable, e.g. https://lab.example.org); others get 403. Default: any.")
    List<String> allowedOrigins = List.of();
    @Option(names = "--stats-interval", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "How often /ws pushes a statistics snapshot; rates are measured over this window (default ${DEFAULT-VALUE}, at least 100ms).")
    Duration statsInterval;

    @Option(names = "--stats-full-client-details", description = "Show every reader of /stats and /ws whole client addresses and user agents (default ${DEFAULT-VALUE}: "
                    + "addresses truncated to /24 or /48, user agents to the product name, unless the reader holds the admin scope).")
    boolean statsFullClientDetails;

    @Option(names = "--stats-cluster-timeout", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "How long the cluster view waits for other nodes' statistics; "
                    + "a node silent for longer is shown missing (default ${DEFAULT-VALUE}; never longer than --stats-interval).")
    Duration statsClusterTimeout;

    @Option(names = "--stats-cluster-max-reply", paramLabel = "SIZE", converter = UnitConverters.BytesConverter.class,
            description = "Largest statistics reply a node sends another over NATS; "
                    + "topics or connections past it are left out and counted (default ${DEFAULT-VALUE}).")
    long statsClusterMaxReply;

    @Option(names = "--trust-forwarded-for", description = "Take each client's address from X-Forwarded-For (the last entry, added by your proxy). Only behind a proxy you trust (default ${DEFAULT-VALUE}).")
    boolean trustForwardedFor;

    @Option(names = "--admin-listen", paramLabel = "HOST:PORT",
            description = "Serve /stats, /ws, /metrics (and /healthz) on this address instead of the main one (default: on the main address).")
    String adminListen;
    // ---- Access control (off unless a key is given) and TLS; see docs/operations.md ----

    /** The original crossbar's name for the HS256 secret, read when no key is configured. */
    static final String LEGACY_SECRET_ENV = "CROSSBAR_SECRET";
    /** The original crossbar's name for the audience, read when none is configured. */
    static final String LEGACY_AUDIENCE_ENV = "CROSSBAR_AUDIENCE";

    @Option(names = "--auth-secret", paramLabel = "SECRET",
            description = "HS256 shared secret (at least 32 bytes); turns access control on. Prefer the env "
                    + "CROSSBAR_AUTH_SECRET (or CROSSBAR_SECRET) or --auth-secret-file: a flag shows in the process list. "
                    + "Never logged.")
    String authSecret;

    @Option(names = "--auth-secret-file", paramLabel = "FILE",
            description = "Read the HS256 secret from FILE (one trailing newline ignored).")
    Path authSecretFile;

    @Option(names = "--auth-public-key", paramLabel = "FILE",
            description = "PEM public key or certificate: RSA (tokens signed RS256) or EC P-256 (ES256).")
    Path authPublicKey;

    @Option(names = "--auth-jwks", paramLabel = "FILE",
            description = "JWKS file of RSA and P-256 public keys (RS256/ES256, chosen by kid).")
    Path authJwks;

    @Option(names = "--auth-jwks-url", paramLabel = "URL",
            description = "The identity provider's key set (https://.../jwks.json or .../certs): RS256/ES256 keys fetched "
                    + "at start, every --auth-jwks-refresh and when a token names an unknown kid; the last good set is kept "
                    + "while the provider is down.")
    java.net.URI authJwksUrl;

    @Option(names = "--auth-jwks-refresh", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "How often the --auth-jwks-url key set is fetched again (default ${DEFAULT-VALUE}).")
    Duration authJwksRefresh;

    @Option(names = "--auth-jwks-ca", paramLabel = "FILE",
            description = "PEM CA certificate(s) of the identity provider's HTTPS server; default: the JVM's trusted CAs.")
    Path authJwksCa;

    @Option(names = "--auth-audience", paramLabel = "URL",
            description = "This relay's name in the tokens' aud claim, e.g. wss://relay.example.org "
                    + "(also env CROSSBAR_AUDIENCE). Required with a key.")
    String authAudience;

    @Option(names = "--auth-clock-skew", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "Tolerance for exp and nbf; a connection lasts until exp plus this (default ${DEFAULT-VALUE}).")
    Duration authClockSkew;

    @Option(names = "--auth-first-message",
            description = "Also accept, from a client that upgrades without a token, the token as its first "
                    + "message, answered with {\"topic\",\"authorised\",\"reason\"} (the original crossbar's way; default off).")
    boolean authFirstMessage;

    @Option(names = "--auth-max-revocations", paramLabel = "N", description = "Revoked jti/sid entries kept at once, each until its token would expire (default ${DEFAULT-VALUE}).")
    int authMaxRevocations;

    @Option(names = "--auth-revocation-ttl", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "How long a revocation is kept when the token's exp is unknown (default ${DEFAULT-VALUE}).")
    Duration authRevocationTtl;

    @Option(names = "--auth-revocation-file", paramLabel = "FILE",
            description = "Keep revocations in FILE (JSON lines) across restarts of a node on its own; with --nats they are "
                    + "kept in a JetStream bucket instead (this file only if the NATS server has no JetStream). Default: memory.")
    Path authRevocationFile;

    @Option(names = "--stats-require-admin",
            description = "Serve /stats, /ws and /metrics only with a token carrying the admin scope (needs a key).")
    boolean statsRequireAdmin;

    @Option(names = "--tls-cert", paramLabel = "FILE",
            description = "PEM certificate chain: serve wss:// and https:// (only) on the listen port. Reloaded when it changes.")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "FILE", description = "PEM (PKCS#8) private key of --tls-cert.")
    Path tlsKey;

    @Option(names = "--tls-provider", paramLabel = "auto|openssl|jdk", description = "auto: OpenSSL (BoringSSL) where available, else the JDK (default ${DEFAULT-VALUE}).")
    String tlsProvider;

    @Option(names = "--tls-reload-interval", paramLabel = "DURATION", converter = UnitConverters.DurationConverter.class,
            description = "How often the certificate files are checked for a change; SIGHUP reloads at once (default ${DEFAULT-VALUE}).")
    Duration tlsReloadInterval;

    /** The process environment; replaced in tests. */
    Map<String, String> env = System.getenv();
    @Mixin
    ClusterOptions cluster = new ClusterOptions();
    @Mixin
    RoutingOptions routing = new RoutingOptions();
    @Mixin
    SessionOptions sessions = new SessionOptions();

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
                .homeLoopMembers(homeLoopMembers)
                .preferNativeTransport(preferNative)
                .maxMessageBytes(maxMessage)
                .ingestMessageBytes(ingestMessageSize)
                .maxPathLength(maxPathLength)
                .subprotocols(subprotocols)
                .handshakeTimeout(handshakeTimeout)
                .pingInterval(pingInterval)
                .idleTimeout(idleTimeout)
                .httpIdleTimeout(httpIdleTimeout)
                .healthProbeInterval(healthProbeInterval)
                .healthMaxProbeAge(healthMaxProbeAge)
                .maxClientQueueBytes(maxClientQueue)
                .maxLoopBacklogBytes(maxLoopBacklog)
                .slowConsumerPolicy(policy)
                .slowConsumerGrace(slowConsumerGrace)
                .clientStallTimeout(clientStallTimeout)
                .shutdownGrace(shutdownGrace)
                .drainTimeout(drainTimeout)
                .logLevel(logLevel)
                .logFormat(LogFormat.of(logFormat))
                .auditLog(auditLog)
                .auditFullAddresses(auditFullAddresses)
                .maxConnections(maxConnections)
                .maxConnectionsPerAddress(maxConnectionsPerAddress)
                .maxConnectionRatePerAddress(maxConnectionRatePerAddress)
                .trustedProxies(TrustedProxies.parse(trustedProxies))
                .proxyProtocol(proxyProtocol)
                .maxTopics(maxTopics)
                .allowedOrigins(allowedOrigins)
                .statsInterval(statsInterval)
                .trustForwardedFor(trustForwardedFor)
                .statsFullClientDetails(statsFullClientDetails)
                .statsClusterTimeout(statsClusterTimeout)
                .statsClusterMaxReplyBytes((int) Math.min(Integer.MAX_VALUE, statsClusterMaxReply))
                .adminListen(adminListen)
                .auth(authConfig())
                .tls(tlsConfig())
                .nodeName(cluster.nodeName)
                .nats(cluster.toNatsConfig())
                .routing(routing.table())
                .replayLimits(routing.limits())
                .defaultSendLimits(routing.sendLimits())
                .latencySendBuffer(routing.latencySendBuffer)
                .backpressureTimeout(routing.backpressureTimeout)
                .sessions(sessions.toConfig())
                .build();
    }

    AuthConfig authConfig() {
        List<String> given = new ArrayList<>();
        VerificationKeys keys = null;
        if (authSecret != null) {
            given.add("--auth-secret");
            keys = VerificationKeys.hmac(authSecret.getBytes(StandardCharsets.UTF_8));
        }
        if (authSecretFile != null) {
            given.add("--auth-secret-file");
            keys = VerificationKeys.readSecretFile(authSecretFile);
        }
        if (authPublicKey != null) {
            given.add("--auth-public-key");
            keys = VerificationKeys.readPublicKeyPem(authPublicKey);
        }
        if (authJwks != null) {
            given.add("--auth-jwks");
            keys = VerificationKeys.readJwks(authJwks);
        }
        if (authJwksUrl != null) {
            given.add("--auth-jwks-url");
            keys = VerificationKeys.remoteJwks(authJwksUrl);
        }
        if (given.size() > 1) {
            throw new IllegalArgumentException(String.join(", ", given) + ": more than one key given (expected: one)");
        }
        if (keys == null) {
            String secret = env.get(LEGACY_SECRET_ENV);
            if (secret != null && !secret.isEmpty()) {
                keys = VerificationKeys.hmac(secret.getBytes(StandardCharsets.UTF_8));
            }
        }
        if (keys == null && !authFirstMessage && !statsRequireAdmin && authAudience == null) {
            // An audience from the environment alone (a leftover of the original's setup) is ignored.
            return AuthConfig.DISABLED;
        }
        return AuthConfig.builder()
                .keys(keys)
                .audience(authAudience != null ? authAudience : emptyAsNull(env.get(LEGACY_AUDIENCE_ENV)))
                .clockSkew(authClockSkew)
                .firstMessage(authFirstMessage)
                .adminPaths(statsRequireAdmin ? AuthConfig.STATS_PATHS : java.util.Set.of())
                .maxRevocations(authMaxRevocations)
                .revocationTtl(authRevocationTtl)
                .revocationFile(authRevocationFile)
                .jwksRefresh(authJwksRefresh)
                .jwksCa(authJwksCa)
                .build();
    }

    private static String emptyAsNull(String v) {
        return v == null || v.isEmpty() ? null : v;
    }

    TlsConfig tlsConfig() {
        if (tlsCert == null && tlsKey == null) {
            return TlsConfig.DISABLED;
        }
        if (tlsCert == null || tlsKey == null) {
            throw new IllegalArgumentException((tlsCert == null ? "--tls-key" : "--tls-cert")
                    + " given alone (expected: both --tls-cert and --tls-key)");
        }
        TlsProvider provider = switch (tlsProvider.toLowerCase(java.util.Locale.ROOT)) {
            case "auto" -> TlsProvider.AUTO;
            case "openssl" -> TlsProvider.OPENSSL;
            case "jdk" -> TlsProvider.JDK;
            default -> throw new IllegalArgumentException("--tls-provider: '" + tlsProvider + "' (expected: auto, openssl or jdk)");
        };
        return TlsConfig.of(tlsCert, tlsKey, provider, tlsReloadInterval);
    }

    /**
     * Starts the relay and serves until the JVM is told to stop; SIGHUP and {@code POST /admin/reload}
     * read the configuration again from {@code source}. Returns the exit code.
     */
    int run(ConfigSource source) {
        ServerConfig config;
        try {
            config = toConfig();
        } catch (IllegalArgumentException e) {
            System.err.println("crossbar: " + e.getMessage());
            return 2;
        }
        CrossbarServer server;
        try {
            server = CrossbarServer.start(config, source);
        } catch (CrossbarServer.StartException e) {
            System.err.println("crossbar: " + e.getMessage());
            return 1;
        }
        HangupReload.install(() -> server.reload());
        // A drain asked for over HTTP ends the process, so that the service manager starts the new one.
        server.afterDrain(() -> new Thread(() -> System.exit(0), "crossbar-drained").start());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // SIGTERM (or the exit above): drain first, then close what is left.
            server.drain(server.config().drainTimeout()).join();
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
