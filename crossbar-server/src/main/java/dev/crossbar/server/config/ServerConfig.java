package dev.crossbar.server.config;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.replay.ReplayLimits;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.route.SendLimits;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * Everything a relay needs to start, validated when built. Defaults are the constants below and
 * the values documented in {@code docs/operations.md}; the command line maps onto the builder.
 */
public final class ServerConfig {

    public static final String DEFAULT_LISTEN = "127.0.0.1:8080";
    /** The start-up line, configuration changes and problems; {@code debug} adds each connection. */
    public static final String DEFAULT_LOG_LEVEL = "info";
    /** The levels an operator may choose, most to least severe. */
    public static final List<String> LOG_LEVELS = List.of("error", "warn", "info", "debug", "trace");
    public static final LogFormat DEFAULT_LOG_FORMAT = LogFormat.TEXT;
    /** One event loop per core the JVM sees (a container's CPU limit included). */
    public static final int DEFAULT_EVENT_LOOPS = Runtime.getRuntime().availableProcessors();
    /** Native epoll where Netty has it (Linux), else NIO. */
    public static final boolean DEFAULT_PREFER_NATIVE_TRANSPORT = true;
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
    /**
     * HTTP ingest of MPEG-TS (a camera posting to {@code /in/<stream>}): the largest message its body
     * is cut into, in whole 188-byte packets. 16 KiB is about an eighth of a second of 1 Mbit/s
     * video, a frame or two at 25 fps: a viewer that falls behind on a {@code max-latency} stream
     * skips that much at a time, not seconds, while a keyframe (tens of kilobytes) still costs only a
     * few messages. Messages are also cut at the end of each read, so a camera writing frame by frame
     * is relayed frame by frame.
     */
    public static final int DEFAULT_INGEST_MESSAGE_BYTES = 16 * 1024;
    /** The smallest ingest message: one MPEG-TS packet. */
    public static final int MIN_INGEST_MESSAGE_BYTES = 188;
    public static final int DEFAULT_MAX_PATH_LENGTH = 256;
    /** As the original crossbar: {@code null}, which jsmpeg offers; browsers offer none by default. */
    public static final List<String> DEFAULT_SUBPROTOCOLS = List.of("null");
    public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_PING_INTERVAL = Duration.ofSeconds(30);
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(60);
    /**
     * How long an HTTP connection kept open after a response ({@code /healthz}, {@code /metrics},
     * {@code /stats}) may wait for its next request: longer than a 15 s Prometheus scrape interval.
     */
    public static final Duration DEFAULT_HTTP_IDLE_TIMEOUT = Duration.ofSeconds(30);
    /** How often a probe message goes through the fan-out to each event loop (see {@code /healthz}). */
    public static final Duration DEFAULT_HEALTH_PROBE_INTERVAL = Duration.ofSeconds(1);
    /** A probe older than this still not delivered on its event loop makes {@code /healthz} answer 503. */
    public static final Duration DEFAULT_HEALTH_MAX_PROBE_AGE = Duration.ofSeconds(5);
    /** Bytes a client may have queued behind the message it is receiving before its messages drop. */
    public static final int DEFAULT_MAX_CLIENT_QUEUE_BYTES = 1024 * 1024;
    public static final long DEFAULT_MAX_LOOP_BACKLOG_BYTES = dev.crossbar.core.topic.Router.DEFAULT_MAX_LOOP_BACKLOG_BYTES;
    public static final SlowConsumerPolicy DEFAULT_SLOW_CONSUMER_POLICY = SlowConsumerPolicy.DROP;
    public static final Duration DEFAULT_SLOW_CONSUMER_GRACE = Duration.ofSeconds(10);
    /**
     * How long a receiver may go without reading any of what is queued for it before it counts as
     * stalled: past {@code maxClientQueueBytes}, only a receiver that has read within this time is
     * given more (up to {@link #maxClientBacklogBytes()}).
     */
    public static final Duration DEFAULT_CLIENT_STALL_TIMEOUT = Duration.ofSeconds(1);
    public static final Duration DEFAULT_SHUTDOWN_GRACE = Duration.ofSeconds(3);
    /**
     * On SIGTERM or {@code POST /admin/drain}: how long a lossless transfer may take to finish before
     * its clients are closed anyway; everyone else is closed with 1012 at once. Inside a container
     * runtime's usual 30 s stop timeout, with room for the close handshakes.
     */
    public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(20);
    /** All TCP connections at once, WebSocket or plain HTTP; beyond it: 503 before the upgrade. */
    public static final int DEFAULT_MAX_CONNECTIONS = 20_000;
    /** Connections from one remote address; beyond it: 429. Generous, as a campus NAT is one address. */
    public static final int DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 1_000;
    /**
     * A topic's first 16 members share one event loop: a lab's topics (a camera or two, its data
     * and control, a handful of students) are that small, and their messages then never cross
     * threads: the router writes to the members in the thread that read the message, with no
     * hand-off and no wake-up of another thread. Later members (a lecture's audience) go to the
     * topic's least-used loop, so a big fan-out keeps every core. 0 turns it off.
     */
    public static final int DEFAULT_HOME_LOOP_MEMBERS = 16;
    /**
     * On {@code max-latency} streams, a receiver's socket send buffer: small, so that what waits
     * waits in the relay's queue, where stale messages can be skipped, not in the kernel. Linux
     * doubles it; 8 KiB is an eighth of a second for a viewer reading 1 Mbit/s video at half its
     * rate, and carries 1.3 Mbit/s over a 50 ms round trip (raise it for more).
     */
    public static final int DEFAULT_LATENCY_SEND_BUFFER = 4 * 1024;
    /**
     * On {@code slow=backpressure} streams, how long a receiver over its bound may read nothing at
     * all before it is closed (1013), so a stalled client cannot hold a stream forever.
     */
    public static final Duration DEFAULT_BACKPRESSURE_TIMEOUT = Duration.ofSeconds(30);
    /** Live topics; a connection that would create one more gets 503. */
    public static final int DEFAULT_MAX_TOPICS = 10_000;
    /** Empty: any Origin may connect, as the original crossbar allowed. */
    public static final List<String> DEFAULT_ALLOWED_ORIGINS = List.of();
    /** How often the stats socket pushes a snapshot and rates are re-measured, as the original page polled. */
    public static final Duration DEFAULT_STATS_INTERVAL = Duration.ofSeconds(5);
    /** Shortest stats interval: below this, rates measure noise and snapshots cost more than they tell. */
    public static final Duration MIN_STATS_INTERVAL = Duration.ofMillis(100);
    /**
     * Off: statistics show client addresses truncated (IPv4 /24, IPv6 /48) and user agents cut to the
     * product name, except to a reader holding the admin scope.
     */
    public static final boolean DEFAULT_STATS_FULL_CLIENT_DETAILS = false;
    /** How long a cluster statistics request waits for the other nodes; a node silent for longer is shown missing. */
    public static final Duration DEFAULT_STATS_CLUSTER_TIMEOUT = Duration.ofSeconds(2);
    /** Largest statistics reply a node sends another over NATS (also never more than the server's max_payload). */
    public static final int DEFAULT_STATS_CLUSTER_MAX_REPLY_BYTES = 512 * 1024;
    /** Smallest reply bound: room for a node's totals and a few topics. */
    public static final int MIN_STATS_CLUSTER_MAX_REPLY_BYTES = 4096;
    /** Off: {@code X-Forwarded-For} is whatever the client says unless a trusted proxy set it. */
    public static final boolean DEFAULT_TRUST_FORWARDED_FOR = false;
    /**
     * New connections per second from one address (a bucket of one second's worth), 0 for no limit:
     * off by default, as a campus NAT is one address (a class of 500 opening four sockets each at
     * nine o'clock is 2,000 in seconds), and so is a lab's gateway in front of its devices. Where
     * clients have addresses of their own (or behind --trusted-proxies), 20 refuses a script's flood
     * of upgrades with 429 long before it costs anything.
     */
    public static final int DEFAULT_MAX_CONNECTION_RATE_PER_ADDRESS = 0;
    /**
     * What each sender may send on a stream whose rule sets no limit of its own: no limit, as
     * before limits existed; {@code --rate-limit}, {@code --rate-burst}, {@code --bandwidth-limit}
     * and {@code --over-limit} set them for all.
     */
    public static final SendLimits DEFAULT_SEND_LIMITS = SendLimits.NONE;
    /** {@code --audit-log -}: audit events go to the main log, in its format. */
    public static final String AUDIT_TO_MAIN_LOG = "-";
    /** Off: the audit trail shows addresses truncated as statistics do (/24, /48). */
    public static final boolean DEFAULT_AUDIT_FULL_ADDRESSES = false;
    /** None: the socket's peer is the client; no header or PROXY protocol is believed. */
    public static final TrustedProxies DEFAULT_TRUSTED_PROXIES = TrustedProxies.NONE;
    /** Off: connections start with HTTP (or TLS), not with a PROXY protocol header. */
    public static final boolean DEFAULT_PROXY_PROTOCOL = false;
    /** Longest node name: it appears in statistics and in the NATS server's connection list. */
    public static final int MAX_NODE_NAME_LENGTH = 64;

    private final InetSocketAddress listen;
    private final int eventLoops;
    private final int homeLoopMembers;
    private final boolean preferNativeTransport;
    private final int maxMessageBytes;
    private final int ingestMessageBytes;
    private final int maxPathLength;
    private final List<String> subprotocols;
    private final Duration handshakeTimeout;
    private final Duration pingInterval;
    private final Duration idleTimeout;
    private final Duration httpIdleTimeout;
    private final Duration healthProbeInterval;
    private final Duration healthMaxProbeAge;
    private final int maxClientQueueBytes;
    private final long maxLoopBacklogBytes;
    private final SlowConsumerPolicy slowConsumerPolicy;
    private final Duration slowConsumerGrace;
    private final Duration clientStallTimeout;
    private final Duration shutdownGrace;
    private final Duration drainTimeout;
    private final String logLevel;
    private final LogFormat logFormat;
    private final int maxConnections;
    private final int maxConnectionsPerAddress;
    private final int maxConnectionRatePerAddress;
    private final TrustedProxies trustedProxies;
    private final SendLimits defaultSendLimits;
    private final String auditLog;
    private final boolean auditFullAddresses;
    private final boolean proxyProtocol;
    private final int maxTopics;
    private final List<String> allowedOrigins;
    private final Duration statsInterval;
    private final boolean trustForwardedFor;
    private final boolean statsFullClientDetails;
    private final Duration statsClusterTimeout;
    private final int statsClusterMaxReplyBytes;
    private final InetSocketAddress adminListen;
    private final AuthConfig auth;
    private final TlsConfig tls;
    private final String nodeName;
    private final NatsConfig nats;
    private final RoutingTable routing;
    private final ReplayLimits replayLimits;
    private final int latencySendBuffer;
    private final Duration backpressureTimeout;
    private final SessionConfig sessions;

    private ServerConfig(Builder b) {
        this.listen = requireNonNull(b.listen, "listen");
        this.eventLoops = positive("eventLoops", b.eventLoops);
        if (b.homeLoopMembers < 0) {
            throw new IllegalArgumentException("homeLoopMembers: " + b.homeLoopMembers + " (expected: >= 0, 0 = off)");
        }
        this.homeLoopMembers = b.homeLoopMembers;
        this.preferNativeTransport = b.preferNativeTransport;
        this.maxMessageBytes = positive("maxMessageBytes", b.maxMessageBytes);
        if (b.ingestMessageBytes < MIN_INGEST_MESSAGE_BYTES) {
            throw new IllegalArgumentException("ingestMessageBytes: " + b.ingestMessageBytes + " (expected: >= "
                    + MIN_INGEST_MESSAGE_BYTES + ", one MPEG-TS packet)");
        }
        this.ingestMessageBytes = b.ingestMessageBytes;
        if (b.maxPathLength < 2) {
            throw new IllegalArgumentException("maxPathLength: " + b.maxPathLength + " (expected: >= 2)");
        }
        this.maxPathLength = b.maxPathLength;
        this.subprotocols = List.copyOf(requireNonNull(b.subprotocols, "subprotocols"));
        for (String p : subprotocols) {
            if (p.isBlank() || p.contains(",")) {
                throw new IllegalArgumentException("subprotocols: '" + p + "' (expected: a token without commas)");
            }
        }
        this.handshakeTimeout = positive("handshakeTimeout", b.handshakeTimeout);
        this.pingInterval = positive("pingInterval", b.pingInterval);
        this.idleTimeout = positive("idleTimeout", b.idleTimeout);
        if (idleTimeout.compareTo(pingInterval) <= 0) {
            throw new IllegalArgumentException("idleTimeout: " + idleTimeout
                    + " (expected: > pingInterval " + pingInterval + ")");
        }
        this.httpIdleTimeout = positive("httpIdleTimeout", b.httpIdleTimeout);
        this.healthProbeInterval = positive("healthProbeInterval", b.healthProbeInterval);
        this.healthMaxProbeAge = positive("healthMaxProbeAge", b.healthMaxProbeAge);
        // A healthy loop's last probe is up to one interval old; twice that leaves room for jitter.
        if (healthMaxProbeAge.compareTo(healthProbeInterval.multipliedBy(2)) < 0) {
            throw new IllegalArgumentException("healthMaxProbeAge: " + healthMaxProbeAge
                    + " (expected: >= 2 x healthProbeInterval " + healthProbeInterval + ")");
        }
        this.maxClientQueueBytes = positive("maxClientQueueBytes", b.maxClientQueueBytes);
        if (b.maxLoopBacklogBytes <= 0) {
            throw new IllegalArgumentException("maxLoopBacklogBytes: " + b.maxLoopBacklogBytes + " (expected: > 0)");
        }
        this.maxLoopBacklogBytes = b.maxLoopBacklogBytes;
        this.slowConsumerPolicy = requireNonNull(b.slowConsumerPolicy, "slowConsumerPolicy");
        this.slowConsumerGrace = positive("slowConsumerGrace", b.slowConsumerGrace);
        this.clientStallTimeout = positive("clientStallTimeout", b.clientStallTimeout);
        this.shutdownGrace = requireNonNull(b.shutdownGrace, "shutdownGrace");
        if (shutdownGrace.isNegative()) {
            throw new IllegalArgumentException("shutdownGrace: " + shutdownGrace + " (expected: >= 0)");
        }
        this.drainTimeout = requireNonNull(b.drainTimeout, "drainTimeout");
        if (drainTimeout.isNegative()) {
            throw new IllegalArgumentException("drainTimeout: " + drainTimeout + " (expected: >= 0)");
        }
        this.logLevel = checkLogLevel(requireNonNull(b.logLevel, "logLevel"));
        this.logFormat = requireNonNull(b.logFormat, "logFormat");
        this.maxConnections = positive("maxConnections", b.maxConnections);
        this.maxConnectionsPerAddress = positive("maxConnectionsPerAddress", b.maxConnectionsPerAddress);
        if (b.maxConnectionRatePerAddress < 0) {
            throw new IllegalArgumentException("maxConnectionRatePerAddress: " + b.maxConnectionRatePerAddress
                    + " (expected: >= 0 connections per second, 0 = off)");
        }
        this.maxConnectionRatePerAddress = b.maxConnectionRatePerAddress;
        this.trustedProxies = requireNonNull(b.trustedProxies, "trustedProxies");
        this.auditLog = b.auditLog == null || b.auditLog.isBlank() ? null : b.auditLog.strip();
        this.auditFullAddresses = b.auditFullAddresses;
        this.defaultSendLimits = requireNonNull(b.defaultSendLimits, "defaultSendLimits").withDefaults(SendLimits.NONE);
        this.proxyProtocol = b.proxyProtocol;
        if (proxyProtocol && !trustedProxies.any()) {
            throw new IllegalArgumentException("proxyProtocol: on without trusted proxies (expected: --trusted-proxies "
                    + "with the addresses of the proxies that send the PROXY header)");
        }
        this.maxTopics = positive("maxTopics", b.maxTopics);
        this.allowedOrigins = List.copyOf(requireNonNull(b.allowedOrigins, "allowedOrigins"));
        for (String o : allowedOrigins) {
            if (o.isBlank() || o.endsWith("/")) {
                throw new IllegalArgumentException("allowedOrigins: '" + o
                        + "' (expected: scheme://host[:port] with no trailing slash, e.g. https://lab.example.org)");
            }
        }
        this.statsInterval = requireNonNull(b.statsInterval, "statsInterval");
        if (statsInterval.compareTo(MIN_STATS_INTERVAL) < 0) {
            throw new IllegalArgumentException("statsInterval: " + statsInterval
                    + " (expected: >= " + MIN_STATS_INTERVAL + ")");
        }
        this.trustForwardedFor = b.trustForwardedFor;
        this.statsFullClientDetails = b.statsFullClientDetails;
        this.statsClusterTimeout = requireNonNull(b.statsClusterTimeout, "statsClusterTimeout");
        if (statsClusterTimeout.isNegative() || statsClusterTimeout.isZero()) {
            throw new IllegalArgumentException("statsClusterTimeout: " + statsClusterTimeout + " (expected: > 0)");
        }
        this.statsClusterMaxReplyBytes = b.statsClusterMaxReplyBytes;
        if (statsClusterMaxReplyBytes < MIN_STATS_CLUSTER_MAX_REPLY_BYTES) {
            throw new IllegalArgumentException("statsClusterMaxReplyBytes: " + statsClusterMaxReplyBytes
                    + " (expected: >= " + MIN_STATS_CLUSTER_MAX_REPLY_BYTES + ")");
        }
        this.adminListen = b.adminListen;
        if (adminListen != null && adminListen.getPort() != 0 && adminListen.equals(listen)) {
            throw new IllegalArgumentException("adminListen: " + adminListen.getHostString() + ":" + adminListen.getPort()
                    + " (expected: an address other than listen)");
        }
        this.auth = requireNonNull(b.auth, "auth");
        if (adminListen != null && !auth.enabled() && b.statsFullClientDetails && !isLoopback(adminListen)) {
            throw new IllegalArgumentException("adminListen: " + adminListen.getHostString() + ":" + adminListen.getPort()
                    + " with whole client addresses and no key: anyone reaching it would see who is connected "
                    + "(expected: a loopback address, or an --auth-* key with --stats-require-admin)");
        }
        this.tls = requireNonNull(b.tls, "tls");
        this.nodeName = b.nodeName != null ? b.nodeName : defaultNodeName();
        if (nodeName.isBlank() || nodeName.length() > MAX_NODE_NAME_LENGTH
                || nodeName.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException("nodeName: '" + nodeName + "' (expected: 1-" + MAX_NODE_NAME_LENGTH
                    + " printable characters)");
        }
        this.nats = b.nats;
        this.routing = requireNonNull(b.routing, "routing");
        this.replayLimits = requireNonNull(b.replayLimits, "replayLimits");
        if (b.latencySendBuffer < 4096) {
            throw new IllegalArgumentException("latencySendBuffer: " + b.latencySendBuffer + " (expected: >= 4KiB)");
        }
        this.latencySendBuffer = b.latencySendBuffer;
        this.backpressureTimeout = positive("backpressureTimeout", b.backpressureTimeout);
        this.sessions = requireNonNull(b.sessions, "sessions");
    }

    /** The host name, or {@code crossbar} if it cannot be found: the default node name. */
    public static String defaultNodeName() {
        return NodeName.DEFAULT;
    }

    /** Looked up once, on first use, since the lookup may consult the resolver. */
    private static final class NodeName {
        static final String DEFAULT = lookup();

        private static String lookup() {
            try {
                String host = InetAddress.getLocalHost().getHostName();
                return host.isBlank() || host.length() > MAX_NODE_NAME_LENGTH ? "crossbar" : host;
            } catch (java.io.IOException | SecurityException e) {
                return "crossbar";
            }
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public static ServerConfig defaults() {
        return builder().build();
    }

    public Builder toBuilder() {
        return new Builder(this);
    }

    private static int positive(String name, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
        }
        return value;
    }

    private static Duration positive(String name, Duration value) {
        requireNonNull(value, name);
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
        }
        return value;
    }

    /**
     * Parses {@code host:port}, {@code :port} (all interfaces) or {@code [v6]:port}.
     *
     * @throws IllegalArgumentException naming the value and the expected form
     */
    public static InetSocketAddress parseListen(String value) {
        requireNonNull(value, "listen");
        String v = value.trim();
        int colon = v.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("listen: '" + value + "' (expected: host:port, e.g. 127.0.0.1:8080)");
        }
        String host = v.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(v.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("listen: '" + value + "' (expected: a port number after ':')");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("listen: '" + value + "' (expected: port 0-65535)");
        }
        return host.isEmpty() ? new InetSocketAddress(port) : InetSocketAddress.createUnresolved(host, port);
    }

    public InetSocketAddress listen() {
        return listen;
    }

    public int eventLoops() {
        return eventLoops;
    }

    /** Members of a topic placed on its home event loop before further ones spread; 0 = off. */
    public int homeLoopMembers() {
        return homeLoopMembers;
    }

    public boolean preferNativeTransport() {
        return preferNativeTransport;
    }

    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    /**
     * HTTP ingest of MPEG-TS: the largest message a body is cut into, as configured; the cut uses
     * whole packets of it, and never more than {@link #maxMessageBytes()}.
     */
    public int ingestMessageBytes() {
        return ingestMessageBytes;
    }

    public int maxPathLength() {
        return maxPathLength;
    }

    public List<String> subprotocols() {
        return subprotocols;
    }

    public Duration handshakeTimeout() {
        return handshakeTimeout;
    }

    public Duration pingInterval() {
        return pingInterval;
    }

    public Duration idleTimeout() {
        return idleTimeout;
    }

    /** See {@link #DEFAULT_HTTP_IDLE_TIMEOUT}. */
    public Duration httpIdleTimeout() {
        return httpIdleTimeout;
    }

    /** See {@link #DEFAULT_HEALTH_PROBE_INTERVAL}. */
    public Duration healthProbeInterval() {
        return healthProbeInterval;
    }

    /** See {@link #DEFAULT_HEALTH_MAX_PROBE_AGE}. */
    public Duration healthMaxProbeAge() {
        return healthMaxProbeAge;
    }

    public int maxClientQueueBytes() {
        return maxClientQueueBytes;
    }

    public long maxLoopBacklogBytes() {
        return maxLoopBacklogBytes;
    }

    public SlowConsumerPolicy slowConsumerPolicy() {
        return slowConsumerPolicy;
    }

    public Duration slowConsumerGrace() {
        return slowConsumerGrace;
    }

    /** See {@link #DEFAULT_CLIENT_STALL_TIMEOUT}. */
    public Duration clientStallTimeout() {
        return clientStallTimeout;
    }

    /**
     * Most bytes a receiver that keeps reading may have queued: two of the largest messages allowed
     * (or the queue bound, if larger), so a reader that keeps up never loses a message to a burst of
     * large ones, while a stalled reader is held to {@link #maxClientQueueBytes()}.
     */
    public long maxClientBacklogBytes() {
        return Math.max(maxClientQueueBytes, 2L * maxMessageBytes);
    }

    /**
     * On {@code slow=backpressure} streams, most bytes a receiver may have queued: what any reader
     * may, plus what can still be on its way from other nodes when the hold reaches them (each
     * node's NATS queue, {@code --nats-max-pending}, and as much again in flight). Local senders
     * are held long before; past this a receiver is closed (1013) rather than lose a message.
     */
    public long maxLosslessBacklogBytes() {
        return maxClientBacklogBytes() + (nats == null ? 0 : 2 * nats.maxPendingBytes());
    }

    public Duration shutdownGrace() {
        return shutdownGrace;
    }

    /** How long a drain lets lossless transfers finish ({@link #DEFAULT_DRAIN_TIMEOUT}); 0: close everyone at once. */
    public Duration drainTimeout() {
        return drainTimeout;
    }

    /** The log's level: one of {@link #LOG_LEVELS}. */
    public String logLevel() {
        return logLevel;
    }

    public LogFormat logFormat() {
        return logFormat;
    }

    /**
     * {@code level}, lower case, if it is one of {@link #LOG_LEVELS}.
     *
     * @throws IllegalArgumentException naming the option otherwise
     */
    public static String checkLogLevel(String level) {
        String l = level.trim().toLowerCase(java.util.Locale.ROOT);
        if (!LOG_LEVELS.contains(l)) {
            throw new IllegalArgumentException("--log-level: '" + level + "' (expected: " + String.join(", ", LOG_LEVELS) + ")");
        }
        return l;
    }

    public int maxConnections() {
        return maxConnections;
    }

    public int maxConnectionsPerAddress() {
        return maxConnectionsPerAddress;
    }

    private static boolean isLoopback(InetSocketAddress a) {
        if (a.isUnresolved()) {
            // A literal is read without a name lookup; of names, only localhost counts.
            java.net.InetAddress literal = io.netty.util.NetUtil.createInetAddressFromIpAddressString(a.getHostString());
            return literal != null ? literal.isLoopbackAddress() : a.getHostString().equals("localhost");
        }
        return a.getAddress().isLoopbackAddress();
    }

    /** New connections per second from one client address; 0 = no limit. */
    public int maxConnectionRatePerAddress() {
        return maxConnectionRatePerAddress;
    }

    /** Where the audit trail goes: a file, {@link #AUDIT_TO_MAIN_LOG}, or null for none. */
    public String auditLog() {
        return auditLog;
    }

    /** Whether the audit trail writes client addresses whole. */
    public boolean auditFullAddresses() {
        return auditFullAddresses;
    }

    /** What a sender may send where its stream's rule sets no limit (every key set). */
    public SendLimits defaultSendLimits() {
        return defaultSendLimits;
    }

    /** The proxies whose word on a client's address is taken ({@code --trusted-proxies}). */
    public TrustedProxies trustedProxies() {
        return trustedProxies;
    }

    /** Whether every connection starts with a PROXY protocol header from a trusted proxy. */
    public boolean proxyProtocol() {
        return proxyProtocol;
    }

    public int maxTopics() {
        return maxTopics;
    }

    /** Origins allowed to open WebSockets; empty means any. Requests without Origin (non-browsers) pass. */
    public List<String> allowedOrigins() {
        return allowedOrigins;
    }

    /** How often stats sockets get a snapshot; rates are measured over this window. */
    public Duration statsInterval() {
        return statsInterval;
    }

    /** Whether a client's address is taken from {@code X-Forwarded-For} (set by a proxy you trust). */
    public boolean trustForwardedFor() {
        return trustForwardedFor;
    }

    /** Whether statistics show every reader client addresses and user agents whole; see {@link #DEFAULT_STATS_FULL_CLIENT_DETAILS}. */
    public boolean statsFullClientDetails() {
        return statsFullClientDetails;
    }

    /** See {@link #DEFAULT_STATS_CLUSTER_TIMEOUT}; a round never waits longer than the stats interval. */
    public Duration statsClusterTimeout() {
        return statsClusterTimeout;
    }

    /** See {@link #DEFAULT_STATS_CLUSTER_MAX_REPLY_BYTES}. */
    public int statsClusterMaxReplyBytes() {
        return statsClusterMaxReplyBytes;
    }

    /**
     * Where {@code /stats}, {@code /ws} and {@code /metrics} are served instead of the main address,
     * or null (the default) to serve them on the main address.
     */
    public InetSocketAddress adminListen() {
        return adminListen;
    }

    /** Access control (tokens); {@link AuthConfig#DISABLED} by default, as in the original crossbar. */
    public AuthConfig auth() {
        return auth;
    }

    /** TLS for wss:// and https://; {@link TlsConfig#DISABLED} by default. */
    public TlsConfig tls() {
        return tls;
    }

    /** This node's name, shown in statistics and in NATS's connection list. */
    public String nodeName() {
        return nodeName;
    }

    /** How to join other nodes through NATS, or null for a node on its own. */
    public NatsConfig nats() {
        return nats;
    }

    /** The stream rules ({@code --route}, {@code --routes}): options per topic, by name. */
    public RoutingTable routing() {
        return routing;
    }

    /** Bounds on what a topic keeps for newcomers ({@code start=last}, {@code start=keyframe}). */
    public ReplayLimits replayLimits() {
        return replayLimits;
    }

    /** On {@code max-latency} streams: bytes a receiver's channel and socket send buffer each hold. */
    public int latencySendBuffer() {
        return latencySendBuffer;
    }

    /** On {@code slow=backpressure} streams: how long a receiver holding the senders may read nothing. */
    public Duration backpressureTimeout() {
        return backpressureTimeout;
    }

    /** Limits of 1:1 sessions ({@code schema=session} streams). */
    public SessionConfig sessions() {
        return sessions;
    }

    /** Builds a {@link ServerConfig}; every setter's default is the matching constant. */
    public static final class Builder {
        private InetSocketAddress listen = parseListen(DEFAULT_LISTEN);
        private int eventLoops = DEFAULT_EVENT_LOOPS;
        private int homeLoopMembers = DEFAULT_HOME_LOOP_MEMBERS;
        private boolean preferNativeTransport = DEFAULT_PREFER_NATIVE_TRANSPORT;
        private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;
        private int ingestMessageBytes = DEFAULT_INGEST_MESSAGE_BYTES;
        private int maxPathLength = DEFAULT_MAX_PATH_LENGTH;
        private List<String> subprotocols = DEFAULT_SUBPROTOCOLS;
        private Duration handshakeTimeout = DEFAULT_HANDSHAKE_TIMEOUT;
        private Duration pingInterval = DEFAULT_PING_INTERVAL;
        private Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;
        private Duration httpIdleTimeout = DEFAULT_HTTP_IDLE_TIMEOUT;
        private Duration healthProbeInterval = DEFAULT_HEALTH_PROBE_INTERVAL;
        private Duration healthMaxProbeAge = DEFAULT_HEALTH_MAX_PROBE_AGE;
        private int maxClientQueueBytes = DEFAULT_MAX_CLIENT_QUEUE_BYTES;
        private long maxLoopBacklogBytes = DEFAULT_MAX_LOOP_BACKLOG_BYTES;
        private SlowConsumerPolicy slowConsumerPolicy = DEFAULT_SLOW_CONSUMER_POLICY;
        private Duration slowConsumerGrace = DEFAULT_SLOW_CONSUMER_GRACE;
        private Duration clientStallTimeout = DEFAULT_CLIENT_STALL_TIMEOUT;
        private Duration shutdownGrace = DEFAULT_SHUTDOWN_GRACE;
        private String logLevel = DEFAULT_LOG_LEVEL;
        private Duration drainTimeout = DEFAULT_DRAIN_TIMEOUT;
        private LogFormat logFormat = DEFAULT_LOG_FORMAT;
        private int maxConnections = DEFAULT_MAX_CONNECTIONS;
        private int maxConnectionsPerAddress = DEFAULT_MAX_CONNECTIONS_PER_ADDRESS;
        private int maxConnectionRatePerAddress = DEFAULT_MAX_CONNECTION_RATE_PER_ADDRESS;
        private TrustedProxies trustedProxies = DEFAULT_TRUSTED_PROXIES;
        private SendLimits defaultSendLimits = DEFAULT_SEND_LIMITS;
        private String auditLog;
        private boolean auditFullAddresses = DEFAULT_AUDIT_FULL_ADDRESSES;
        private boolean proxyProtocol = DEFAULT_PROXY_PROTOCOL;
        private int maxTopics = DEFAULT_MAX_TOPICS;
        private List<String> allowedOrigins = DEFAULT_ALLOWED_ORIGINS;
        private Duration statsInterval = DEFAULT_STATS_INTERVAL;
        private boolean trustForwardedFor = DEFAULT_TRUST_FORWARDED_FOR;
        private boolean statsFullClientDetails = DEFAULT_STATS_FULL_CLIENT_DETAILS;
        private Duration statsClusterTimeout = DEFAULT_STATS_CLUSTER_TIMEOUT;
        private int statsClusterMaxReplyBytes = DEFAULT_STATS_CLUSTER_MAX_REPLY_BYTES;
        private InetSocketAddress adminListen;
        private AuthConfig auth = AuthConfig.DISABLED;
        private TlsConfig tls = TlsConfig.DISABLED;
        private String nodeName;
        private NatsConfig nats;
        private RoutingTable routing = RoutingTable.EMPTY;
        private ReplayLimits replayLimits = ReplayLimits.DEFAULT;
        private int latencySendBuffer = DEFAULT_LATENCY_SEND_BUFFER;
        private Duration backpressureTimeout = DEFAULT_BACKPRESSURE_TIMEOUT;
        private SessionConfig sessions = SessionConfig.DEFAULT;

        private Builder() {
        }

        private Builder(ServerConfig c) {
            listen = c.listen;
            eventLoops = c.eventLoops;
            homeLoopMembers = c.homeLoopMembers;
            preferNativeTransport = c.preferNativeTransport;
            maxMessageBytes = c.maxMessageBytes;
            ingestMessageBytes = c.ingestMessageBytes;
            maxPathLength = c.maxPathLength;
            subprotocols = c.subprotocols;
            handshakeTimeout = c.handshakeTimeout;
            pingInterval = c.pingInterval;
            idleTimeout = c.idleTimeout;
            httpIdleTimeout = c.httpIdleTimeout;
            healthProbeInterval = c.healthProbeInterval;
            healthMaxProbeAge = c.healthMaxProbeAge;
            maxClientQueueBytes = c.maxClientQueueBytes;
            maxLoopBacklogBytes = c.maxLoopBacklogBytes;
            slowConsumerPolicy = c.slowConsumerPolicy;
            slowConsumerGrace = c.slowConsumerGrace;
            clientStallTimeout = c.clientStallTimeout;
            shutdownGrace = c.shutdownGrace;
            logLevel = c.logLevel;
            drainTimeout = c.drainTimeout;
            logFormat = c.logFormat;
            maxConnections = c.maxConnections;
            maxConnectionsPerAddress = c.maxConnectionsPerAddress;
            maxConnectionRatePerAddress = c.maxConnectionRatePerAddress;
            trustedProxies = c.trustedProxies;
            defaultSendLimits = c.defaultSendLimits;
            auditLog = c.auditLog;
            auditFullAddresses = c.auditFullAddresses;
            proxyProtocol = c.proxyProtocol;
            maxTopics = c.maxTopics;
            allowedOrigins = c.allowedOrigins;
            statsInterval = c.statsInterval;
            trustForwardedFor = c.trustForwardedFor;
            statsFullClientDetails = c.statsFullClientDetails;
            statsClusterTimeout = c.statsClusterTimeout;
            statsClusterMaxReplyBytes = c.statsClusterMaxReplyBytes;
            adminListen = c.adminListen;
            auth = c.auth;
            tls = c.tls;
            nodeName = c.nodeName;
            nats = c.nats;
            routing = c.routing;
            replayLimits = c.replayLimits;
            latencySendBuffer = c.latencySendBuffer;
            backpressureTimeout = c.backpressureTimeout;
            sessions = c.sessions;
        }

        public Builder listen(InetSocketAddress v) {
            listen = v;
            return this;
        }

        public Builder listen(String hostPort) {
            listen = parseListen(hostPort);
            return this;
        }

        public Builder eventLoops(int v) {
            eventLoops = v;
            return this;
        }

        public Builder homeLoopMembers(int v) {
            homeLoopMembers = v;
            return this;
        }

        public Builder preferNativeTransport(boolean v) {
            preferNativeTransport = v;
            return this;
        }

        public Builder maxMessageBytes(int v) {
            maxMessageBytes = v;
            return this;
        }

        public Builder ingestMessageBytes(int v) {
            ingestMessageBytes = v;
            return this;
        }

        public Builder maxPathLength(int v) {
            maxPathLength = v;
            return this;
        }

        public Builder subprotocols(List<String> v) {
            subprotocols = v;
            return this;
        }

        public Builder handshakeTimeout(Duration v) {
            handshakeTimeout = v;
            return this;
        }

        public Builder pingInterval(Duration v) {
            pingInterval = v;
            return this;
        }

        public Builder idleTimeout(Duration v) {
            idleTimeout = v;
            return this;
        }

        public Builder httpIdleTimeout(Duration v) {
            httpIdleTimeout = v;
            return this;
        }

        public Builder healthProbeInterval(Duration v) {
            healthProbeInterval = v;
            return this;
        }

        public Builder healthMaxProbeAge(Duration v) {
            healthMaxProbeAge = v;
            return this;
        }

        public Builder maxClientQueueBytes(int v) {
            maxClientQueueBytes = v;
            return this;
        }

        public Builder maxLoopBacklogBytes(long v) {
            maxLoopBacklogBytes = v;
            return this;
        }

        public Builder slowConsumerPolicy(SlowConsumerPolicy v) {
            slowConsumerPolicy = v;
            return this;
        }

        public Builder clientStallTimeout(Duration v) {
            clientStallTimeout = v;
            return this;
        }

        public Builder slowConsumerGrace(Duration v) {
            slowConsumerGrace = v;
            return this;
        }

        public Builder shutdownGrace(Duration v) {
            shutdownGrace = v;
            return this;
        }

        public Builder drainTimeout(Duration v) {
            drainTimeout = v;
            return this;
        }

        public Builder logLevel(String v) {
            logLevel = v;
            return this;
        }

        public Builder logFormat(LogFormat v) {
            logFormat = v;
            return this;
        }

        public Builder maxConnections(int v) {
            maxConnections = v;
            return this;
        }

        public Builder maxConnectionsPerAddress(int v) {
            maxConnectionsPerAddress = v;
            return this;
        }

        public Builder maxConnectionRatePerAddress(int v) {
            maxConnectionRatePerAddress = v;
            return this;
        }

        /** A file, {@link #AUDIT_TO_MAIN_LOG}, or null (the default) for no audit trail. */
        public Builder auditLog(String v) {
            auditLog = v;
            return this;
        }

        public Builder auditFullAddresses(boolean v) {
            auditFullAddresses = v;
            return this;
        }

        public Builder defaultSendLimits(SendLimits v) {
            defaultSendLimits = v;
            return this;
        }

        public Builder trustedProxies(TrustedProxies v) {
            trustedProxies = v;
            return this;
        }

        public Builder proxyProtocol(boolean v) {
            proxyProtocol = v;
            return this;
        }

        public Builder maxTopics(int v) {
            maxTopics = v;
            return this;
        }

        public Builder allowedOrigins(List<String> v) {
            allowedOrigins = v;
            return this;
        }

        public Builder statsInterval(Duration v) {
            statsInterval = v;
            return this;
        }

        public Builder trustForwardedFor(boolean v) {
            trustForwardedFor = v;
            return this;
        }

        public Builder statsFullClientDetails(boolean v) {
            statsFullClientDetails = v;
            return this;
        }

        public Builder statsClusterTimeout(Duration v) {
            statsClusterTimeout = v;
            return this;
        }

        public Builder statsClusterMaxReplyBytes(int v) {
            statsClusterMaxReplyBytes = v;
            return this;
        }

        /** The admin address, or null to serve statistics and metrics on the main address. */
        public Builder adminListen(InetSocketAddress v) {
            adminListen = v;
            return this;
        }

        /** The admin address as {@code host:port}, or null. */
        public Builder adminListen(String hostPort) {
            try {
                adminListen = hostPort == null ? null : parseListen(hostPort);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("adminListen: '" + hostPort
                        + "' (expected: host:port with a port 0-65535, e.g. 127.0.0.1:9090)", e);
            }
            return this;
        }

        public Builder auth(AuthConfig v) {
            auth = v;
            return this;
        }

        public Builder tls(TlsConfig v) {
            tls = v;
            return this;
        }

        /** Defaults to {@link #defaultNodeName()}. */
        public Builder nodeName(String v) {
            nodeName = v;
            return this;
        }

        /** Null (the default) for a node on its own. */
        public Builder nats(NatsConfig v) {
            nats = v;
            return this;
        }

        public Builder routing(RoutingTable v) {
            routing = v;
            return this;
        }

        public Builder replayLimits(ReplayLimits v) {
            replayLimits = v;
            return this;
        }

        public Builder latencySendBuffer(int v) {
            latencySendBuffer = v;
            return this;
        }

        public Builder backpressureTimeout(Duration v) {
            backpressureTimeout = v;
            return this;
        }

        public Builder sessions(SessionConfig v) {
            sessions = v;
            return this;
        }

        public ServerConfig build() {
            return new ServerConfig(this);
        }
    }
}
