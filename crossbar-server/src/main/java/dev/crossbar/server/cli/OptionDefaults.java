package dev.crossbar.server.cli;

import static dev.crossbar.core.units.Units.formatBytes;
import static dev.crossbar.core.units.Units.formatDuration;

import dev.crossbar.core.replay.ReplayLimits;
import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.NatsConfig;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.SessionConfig;
import dev.crossbar.server.config.TlsConfig;
import java.util.Map;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every option's default, read from the configuration's constants (each written once, there), so
 * that {@code --help} shows them and no flag repeats a value as a literal of its own. Options not
 * listed have none: they are off, or empty, until given.
 */
final class OptionDefaults implements IDefaultValueProvider {

    /** Option name to its default, as text the option's converter reads. */
    static final Map<String, String> DEFAULTS = Map.ofEntries(
            Map.entry("--listen", ServerConfig.DEFAULT_LISTEN),
            Map.entry("--log-level", ServerConfig.DEFAULT_LOG_LEVEL),
            Map.entry("--log-format", ServerConfig.DEFAULT_LOG_FORMAT.label()),
            Map.entry("--audit-full-addresses", Boolean.toString(ServerConfig.DEFAULT_AUDIT_FULL_ADDRESSES)),
            Map.entry("--event-loops", Integer.toString(ServerConfig.DEFAULT_EVENT_LOOPS)),
            Map.entry("--home-loop-members", Integer.toString(ServerConfig.DEFAULT_HOME_LOOP_MEMBERS)),
            Map.entry("--transport", ServerConfig.DEFAULT_PREFER_NATIVE_TRANSPORT ? "auto" : "nio"),
            Map.entry("--max-message", formatBytes(ServerConfig.DEFAULT_MAX_MESSAGE_BYTES)),
            Map.entry("--ingest-message-size", formatBytes(ServerConfig.DEFAULT_INGEST_MESSAGE_BYTES)),
            Map.entry("--max-path-length", Integer.toString(ServerConfig.DEFAULT_MAX_PATH_LENGTH)),
            Map.entry("--subprotocol", String.join(",", ServerConfig.DEFAULT_SUBPROTOCOLS)),
            Map.entry("--handshake-timeout", formatDuration(ServerConfig.DEFAULT_HANDSHAKE_TIMEOUT)),
            Map.entry("--ping-interval", formatDuration(ServerConfig.DEFAULT_PING_INTERVAL)),
            Map.entry("--idle-timeout", formatDuration(ServerConfig.DEFAULT_IDLE_TIMEOUT)),
            Map.entry("--http-idle-timeout", formatDuration(ServerConfig.DEFAULT_HTTP_IDLE_TIMEOUT)),
            Map.entry("--health-probe-interval", formatDuration(ServerConfig.DEFAULT_HEALTH_PROBE_INTERVAL)),
            Map.entry("--health-max-probe-age", formatDuration(ServerConfig.DEFAULT_HEALTH_MAX_PROBE_AGE)),
            Map.entry("--max-client-queue", formatBytes(ServerConfig.DEFAULT_MAX_CLIENT_QUEUE_BYTES)),
            Map.entry("--max-loop-backlog", formatBytes(ServerConfig.DEFAULT_MAX_LOOP_BACKLOG_BYTES)),
            Map.entry("--slow-consumer", ServerConfig.DEFAULT_SLOW_CONSUMER_POLICY.label()),
            Map.entry("--slow-consumer-grace", formatDuration(ServerConfig.DEFAULT_SLOW_CONSUMER_GRACE)),
            Map.entry("--client-stall-timeout", formatDuration(ServerConfig.DEFAULT_CLIENT_STALL_TIMEOUT)),
            Map.entry("--shutdown-grace", formatDuration(ServerConfig.DEFAULT_SHUTDOWN_GRACE)),
            Map.entry("--drain-timeout", formatDuration(ServerConfig.DEFAULT_DRAIN_TIMEOUT)),
            Map.entry("--max-connections", Integer.toString(ServerConfig.DEFAULT_MAX_CONNECTIONS)),
            Map.entry("--max-connections-per-address", Integer.toString(ServerConfig.DEFAULT_MAX_CONNECTIONS_PER_ADDRESS)),
            Map.entry("--max-connection-rate-per-address", Integer.toString(ServerConfig.DEFAULT_MAX_CONNECTION_RATE_PER_ADDRESS)),
            Map.entry("--proxy-protocol", Boolean.toString(ServerConfig.DEFAULT_PROXY_PROTOCOL)),
            Map.entry("--max-topics", Integer.toString(ServerConfig.DEFAULT_MAX_TOPICS)),
            Map.entry("--stats-interval", formatDuration(ServerConfig.DEFAULT_STATS_INTERVAL)),
            Map.entry("--stats-full-client-details", Boolean.toString(ServerConfig.DEFAULT_STATS_FULL_CLIENT_DETAILS)),
            Map.entry("--stats-cluster-timeout", formatDuration(ServerConfig.DEFAULT_STATS_CLUSTER_TIMEOUT)),
            Map.entry("--stats-cluster-max-reply", formatBytes(ServerConfig.DEFAULT_STATS_CLUSTER_MAX_REPLY_BYTES)),
            Map.entry("--trust-forwarded-for", Boolean.toString(ServerConfig.DEFAULT_TRUST_FORWARDED_FOR)),
            Map.entry("--auth-clock-skew", formatDuration(AuthConfig.DEFAULT_CLOCK_SKEW)),
            Map.entry("--auth-jwks-refresh", formatDuration(AuthConfig.DEFAULT_JWKS_REFRESH)),
            Map.entry("--auth-max-revocations", Integer.toString(AuthConfig.DEFAULT_MAX_REVOCATIONS)),
            Map.entry("--auth-revocation-ttl", formatDuration(AuthConfig.DEFAULT_REVOCATION_TTL)),
            Map.entry("--tls-provider", TlsConfig.DEFAULT_PROVIDER.label()),
            Map.entry("--tls-reload-interval", formatDuration(TlsConfig.DEFAULT_RELOAD_INTERVAL)),
            Map.entry("--nats-max-pending", formatBytes(NatsConfig.DEFAULT_MAX_PENDING_BYTES)),
            Map.entry("--nats-lossless-timeout", formatDuration(NatsConfig.DEFAULT_LOSSLESS_TIMEOUT)),
            Map.entry("--last-values", Integer.toString(ReplayLimits.DEFAULT_LAST_VALUES)),
            Map.entry("--last-values-size", formatBytes(ReplayLimits.DEFAULT_LAST_VALUE_BYTES)),
            Map.entry("--keyframe-buffer", formatBytes(ReplayLimits.DEFAULT_KEYFRAME_BYTES)),
            Map.entry("--rate-limit", ServerConfig.DEFAULT_SEND_LIMITS.rate() == 0 ? "off"
                    : dev.crossbar.core.units.Units.formatRate(ServerConfig.DEFAULT_SEND_LIMITS.rate())),
            Map.entry("--rate-burst", Integer.toString(ServerConfig.DEFAULT_SEND_LIMITS.burst())),
            Map.entry("--bandwidth-limit", ServerConfig.DEFAULT_SEND_LIMITS.bandwidth() == 0 ? "off"
                    : dev.crossbar.core.units.Units.formatBitRate(ServerConfig.DEFAULT_SEND_LIMITS.bandwidth())),
            Map.entry("--over-limit", ServerConfig.DEFAULT_SEND_LIMITS.over().label()),
            Map.entry("--latency-send-buffer", formatBytes(ServerConfig.DEFAULT_LATENCY_SEND_BUFFER)),
            Map.entry("--backpressure-timeout", formatDuration(ServerConfig.DEFAULT_BACKPRESSURE_TIMEOUT)),
            Map.entry("--session-open-timeout", formatDuration(SessionConfig.DEFAULT_OPEN_TIMEOUT)),
            Map.entry("--session-full-client-details", Boolean.toString(SessionConfig.DEFAULT_FULL_CLIENT_DETAILS)),
            Map.entry("--max-pending-sessions", Integer.toString(SessionConfig.DEFAULT_MAX_PENDING)));

    @Override
    public String defaultValue(ArgSpec argSpec) {
        return argSpec instanceof OptionSpec o ? DEFAULTS.get(o.longestName()) : null;
    }
}
