package dev.crossbar.server.config;

import static java.util.Objects.requireNonNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * How a node reaches NATS: servers, credentials, TLS and the bound on what may wait to be sent.
 * Immutable and validated when built; {@link #toString()} never shows a secret.
 */
public final class NatsConfig {

    /** Bytes of messages that may wait for NATS, in Crossbar's queue and again in the client's. */
    public static final long DEFAULT_MAX_PENDING_BYTES = 64L * 1024 * 1024;
    /** Pause after a full round of failed connection attempts over every known server. */
    public static final Duration DEFAULT_RECONNECT_WAIT = Duration.ofMillis(500);
    /** How often an idle link is pinged; two unanswered pings mark the server dead. */
    public static final Duration DEFAULT_PING_INTERVAL = Duration.ofSeconds(10);
    /** Longest wait for one server to accept a connection. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /**
     * Lossless streams: how long a node keeps messages for another node that it cannot reach (its
     * own link down, the other silent) before it gives them up and says so. Longer than a hung NATS
     * server goes unnoticed (three ping intervals), so that moving to another server loses nothing.
     */
    public static final Duration DEFAULT_LOSSLESS_TIMEOUT = Duration.ofSeconds(60);

    private final List<String> servers;
    private final String user;
    private final String password;
    private final String token;
    private final Path credsFile;
    private final boolean tls;
    private final Path tlsCaFile;
    private final long maxPendingBytes;
    private final Duration reconnectWait;
    private final Duration pingInterval;
    private final Duration connectTimeout;
    private final Duration losslessTimeout;

    private NatsConfig(Builder b) {
        this.servers = List.copyOf(requireNonNull(b.servers, "servers"));
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("nats: no server (expected: nats://host:port[,nats://host:port...])");
        }
        for (String s : servers) {
            if (s.isBlank() || s.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
                throw new IllegalArgumentException("nats: '" + redactUrl(s) + "' (expected: a URL such as nats://host:4222)");
            }
        }
        this.user = emptyAsNull(b.user);
        this.password = emptyAsNull(b.password);
        this.token = emptyAsNull(b.token);
        this.credsFile = b.credsFile;
        this.tls = b.tls;
        this.tlsCaFile = b.tlsCaFile;
        if ((user == null) != (password == null)) {
            throw new IllegalArgumentException("natsUser/natsPassword: only one given (expected: both or neither)");
        }
        int ways = (user != null ? 1 : 0) + (token != null ? 1 : 0) + (credsFile != null ? 1 : 0);
        if (ways > 1) {
            throw new IllegalArgumentException(
                    "nats authentication: more than one of user/password, token, creds file (expected: at most one)");
        }
        readable("natsCreds", credsFile);
        readable("natsTlsCa", tlsCaFile);
        if (b.maxPendingBytes <= 0) {
            throw new IllegalArgumentException("natsMaxPendingBytes: " + b.maxPendingBytes + " (expected: > 0)");
        }
        this.maxPendingBytes = b.maxPendingBytes;
        this.reconnectWait = positive("natsReconnectWait", b.reconnectWait);
        this.pingInterval = positive("natsPingInterval", b.pingInterval);
        this.connectTimeout = positive("natsConnectTimeout", b.connectTimeout);
        this.losslessTimeout = positive("natsLosslessTimeout", b.losslessTimeout);
        if (losslessTimeout.compareTo(pingInterval.multipliedBy(3)) <= 0) {
            throw new IllegalArgumentException("natsLosslessTimeout: " + losslessTimeout + " (expected: > 3 x natsPingInterval = "
                    + pingInterval.multipliedBy(3) + ", the longest a hung NATS server goes unnoticed)");
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    private static String emptyAsNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    private static void readable(String name, Path file) {
        if (file != null && !Files.isReadable(file)) {
            throw new IllegalArgumentException(name + ": " + file + " (expected: a readable file)");
        }
    }

    private static Duration positive(String name, Duration value) {
        requireNonNull(value, name);
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
        }
        return value;
    }

    /** {@code url} without any {@code user:password@} part, fit for a log line. */
    public static String redactUrl(String url) {
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        if (at < 0) {
            return url;
        }
        int start = scheme < 0 ? 0 : scheme + 3;
        return at > start ? url.substring(0, start) + "***@" + url.substring(at + 1) : url;
    }

    public List<String> servers() {
        return servers;
    }

    public String user() {
        return user;
    }

    public String password() {
        return password;
    }

    public String token() {
        return token;
    }

    public Path credsFile() {
        return credsFile;
    }

    /** Whether to require TLS even for {@code nats://} URLs ({@code tls://} URLs always use it). */
    public boolean tls() {
        return tls;
    }

    /** PEM file of the CA that signed the servers' certificates, or null for the JVM's default trust. */
    public Path tlsCaFile() {
        return tlsCaFile;
    }

    public long maxPendingBytes() {
        return maxPendingBytes;
    }

    public Duration reconnectWait() {
        return reconnectWait;
    }

    public Duration pingInterval() {
        return pingInterval;
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** Lossless streams: how long messages are kept for a node that cannot be reached. */
    public Duration losslessTimeout() {
        return losslessTimeout;
    }

    /** Servers (credentials in URLs hidden) and which kinds of authentication are set, never their values. */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("nats ");
        s.append(String.join(",", servers.stream().map(NatsConfig::redactUrl).toList()));
        if (user != null) {
            s.append(" user=").append(user).append(" password=***");
        }
        if (token != null) {
            s.append(" token=***");
        }
        if (credsFile != null) {
            s.append(" creds=").append(credsFile);
        }
        if (tls || tlsCaFile != null) {
            s.append(" tls").append(tlsCaFile != null ? " ca=" + tlsCaFile : "");
        }
        return s.toString();
    }

    /** Builds a {@link NatsConfig}; every setter's default is the matching constant. */
    public static final class Builder {
        private List<String> servers = List.of();
        private String user;
        private String password;
        private String token;
        private Path credsFile;
        private boolean tls;
        private Path tlsCaFile;
        private long maxPendingBytes = DEFAULT_MAX_PENDING_BYTES;
        private Duration reconnectWait = DEFAULT_RECONNECT_WAIT;
        private Duration pingInterval = DEFAULT_PING_INTERVAL;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration losslessTimeout = DEFAULT_LOSSLESS_TIMEOUT;

        private Builder() {
        }

        public Builder servers(List<String> v) {
            servers = v;
            return this;
        }

        /** Comma-separated URLs, as the {@code --nats} flag takes them. */
        public Builder servers(String commaSeparated) {
            servers = java.util.Arrays.stream(commaSeparated.split(",")).map(String::trim).toList();
            return this;
        }

        public Builder user(String v) {
            user = v;
            return this;
        }

        public Builder password(String v) {
            password = v;
            return this;
        }

        public Builder token(String v) {
            token = v;
            return this;
        }

        public Builder credsFile(Path v) {
            credsFile = v;
            return this;
        }

        public Builder tls(boolean v) {
            tls = v;
            return this;
        }

        public Builder tlsCaFile(Path v) {
            tlsCaFile = v;
            return this;
        }

        public Builder maxPendingBytes(long v) {
            maxPendingBytes = v;
            return this;
        }

        public Builder reconnectWait(Duration v) {
            reconnectWait = v;
            return this;
        }

        public Builder pingInterval(Duration v) {
            pingInterval = v;
            return this;
        }

        public Builder connectTimeout(Duration v) {
            connectTimeout = v;
            return this;
        }

        public Builder losslessTimeout(Duration v) {
            losslessTimeout = v;
            return this;
        }

        public NatsConfig build() {
            return new NatsConfig(this);
        }
    }
}
