package dev.crossbar.server.metrics;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.relay.RelayBuffers;
import dev.crossbar.core.stats.DepartedTraffic.Kind;
import dev.crossbar.core.stats.Traffic;
import dev.crossbar.core.topic.Router;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.config.BuildInfo;
import dev.crossbar.server.http.HandshakeFailures;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyAllocatorMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyEventExecutorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.util.internal.PlatformDependent;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntSupplier;
import java.util.function.ToLongFunction;

/**
 * The relay's meters, rendered for Prometheus by {@link #scrape()}.
 *
 * <p>Crossbar's own: connections and topics (gauges), messages and payload bytes in and out, drops
 * and refusals (counters that read the live per-connection counters plus those of departed
 * connections, so the message path pays nothing for them), handshake failures by reason, stats
 * sockets and the fan-out backlog, the build's version. Tags are schema, role and reason (and the
 * one version): closed sets. Besides
 * those: JVM memory, GC, threads, classes, CPU and uptime; Netty's allocator (the one the relay's
 * channels use), direct memory, and each event loop's pending tasks.
 */
public final class RelayMetrics implements AutoCloseable {

    public static final String CONNECTIONS = "crossbar.connections";
    public static final String TOPICS = "crossbar.topics";
    public static final String MESSAGES_IN = "crossbar.messages.in";
    public static final String PAYLOAD_IN = "crossbar.payload.in";
    public static final String MESSAGES_OUT = "crossbar.messages.out";
    public static final String PAYLOAD_OUT = "crossbar.payload.out";
    public static final String DROPPED = "crossbar.messages.dropped";
    public static final String REFUSED = "crossbar.messages.refused";
    public static final String HANDSHAKE_FAILURES = "crossbar.handshake.failures";
    public static final String STATS_SOCKETS = "crossbar.stats.sockets";
    public static final String FANOUT_BACKLOG = "crossbar.fanout.backlog";
    /** Gauge: the connection limit ({@code --max-connections}), for "near the limit" alerts. */
    public static final String CONNECTIONS_MAX = "crossbar.connections.max";
    /** Gauge: the topic limit ({@code --max-topics}). */
    public static final String TOPICS_MAX = "crossbar.topics.max";
    /** Gauge: 1:N topics whose connected publisher has sent nothing for a minute (see {@link SilentTopics}). */
    public static final String TOPICS_SILENT = "crossbar.topics.silent";
    /** Gauge, always 1, tagged with the relay's version: which build each node runs. */
    public static final String BUILD_INFO = "crossbar.build.info";
    public static final String DIRECT_MEMORY_USED = "netty.direct.memory.used";
    public static final String DIRECT_MEMORY_MAX = "netty.direct.memory.max";

    private static final String BYTES = "bytes";

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JvmGcMetrics gc = new JvmGcMetrics();
    // Micrometer holds the objects behind gauges and function counters weakly; these fields keep
    // them alive as long as the registry (otherwise a scrape after a GC reads NaN).
    private final TrafficTally tally;
    private final Router router;
    private final HandshakeFailures failures;
    private final IntSupplier statsSockets;
    private final SilentTopics silentTopics;
    /** The parts whose meters {@link #bind} registered (kept for the same reason). */
    private final List<MeterBinder> bound = new CopyOnWriteArrayList<>();
    /** The limits {@link #bindLimits} reads live, kept for the same reason. */
    private final List<IntSupplier> limitSuppliers = new CopyOnWriteArrayList<>();

    public RelayMetrics(TopicRegistry topics, Router router, HandshakeFailures failures, EventLoopGroup eventLoops,
                        IntSupplier statsSockets) {
        this.router = requireNonNull(router, "router");
        this.failures = requireNonNull(failures, "failures");
        this.statsSockets = requireNonNull(statsSockets, "statsSockets");
        requireNonNull(eventLoops, "eventLoops");
        this.tally = new TrafficTally(requireNonNull(topics, "topics"));
        this.silentTopics = new SilentTopics(topics);
        Gauge.builder(BUILD_INFO, () -> 1).tag("version", BuildInfo.version())
                .description("The relay's version (always 1), as --version prints it").register(registry);
        Gauge.builder(TOPICS_SILENT, silentTopics, SilentTopics::count)
                .description("1:N topics whose connected publisher has sent nothing for "
                        + SilentTopics.SILENT_AFTER.toSeconds() + "s").register(registry);

        for (Kind kind : TrafficTally.KINDS) {
            Tags tags = Tags.of("schema", kind.schema(), "role", kind.role().label());
            Gauge.builder(CONNECTIONS, tally, t -> t.connections(kind)).tags(tags)
                    .description("Open WebSocket connections on relay topics").register(registry);
            counter(MESSAGES_IN, "Whole messages received from clients", null, tally, kind, tags, Traffic::messagesIn);
            counter(PAYLOAD_IN, "Payload bytes received from clients", BYTES, tally, kind, tags, Traffic::bytesIn);
            counter(MESSAGES_OUT, "Whole messages written to clients", null, tally, kind, tags, Traffic::messagesOut);
            counter(PAYLOAD_OUT, "Payload bytes written to clients", BYTES, tally, kind, tags, Traffic::bytesOut);
            counter(DROPPED, "Messages not delivered to a client that was not keeping up", null, tally, kind, tags,
                    Traffic::dropped);
            counter(REFUSED, "Messages from clients whose role may not send (e.g. 1:N subscribers)", null, tally, kind,
                    tags, Traffic::refused);
        }
        for (String schema : TrafficTally.KINDS.stream().map(Kind::schema).distinct().toList()) {
            Gauge.builder(TOPICS, tally, t -> t.topics(schema)).tag("schema", schema)
                    .description("Topics with at least one connection").register(registry);
        }
        for (HandshakeFailures.Reason reason : HandshakeFailures.Reason.values()) {
            FunctionCounter.builder(HANDSHAKE_FAILURES, failures, f -> f.count(reason)).tag("reason", reason.label())
                    .description("Connections refused before becoming a WebSocket").register(registry);
        }
        Gauge.builder(STATS_SOCKETS, statsSockets, IntSupplier::getAsInt)
                .description("Open statistics sockets (/ws)").register(registry);
        Gauge.builder(FANOUT_BACKLOG, router, Router::backlogBytes).baseUnit(BYTES)
                .description("Fan-out bytes queued for event loops, not yet written").register(registry);
        Gauge.builder(DIRECT_MEMORY_USED, () -> PlatformDependent.usedDirectMemory()).baseUnit(BYTES)
                .description("Direct memory Netty has reserved (-1 if not tracked)").register(registry);
        Gauge.builder(DIRECT_MEMORY_MAX, () -> PlatformDependent.maxDirectMemory()).baseUnit(BYTES)
                .description("Direct memory Netty may use").register(registry);

        new JvmMemoryMetrics().bindTo(registry);
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        // The relay's one allocator: every buffer its channels and messages use.
        new NettyAllocatorMetrics(RelayBuffers.metrics()).bindTo(registry);
        new NettyEventExecutorMetrics(eventLoops).bindTo(registry);
    }

    private void counter(String name, String description, String unit, TrafficTally from, Kind kind, Tags tags,
                         ToLongFunction<Traffic> field) {
        FunctionCounter.builder(name, from, t -> field.applyAsLong(t.traffic(kind)))
                .tags(tags).baseUnit(unit).description(description).register(registry);
    }

    /** Every meter in the Prometheus text format (version 0.0.4). */
    public String scrape() {
        return registry.scrape();
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }

    /** Adds the relay's limits as gauges, so alerts compare usage with them rather than with a copied number. */
    public void bindLimits(IntSupplier maxConnections, IntSupplier maxTopics) {
        limitSuppliers.add(maxConnections);
        limitSuppliers.add(maxTopics);
        Gauge.builder(CONNECTIONS_MAX, maxConnections, IntSupplier::getAsInt)
                .description("Connection limit (--max-connections); beyond it 503").register(registry);
        Gauge.builder(TOPICS_MAX, maxTopics, IntSupplier::getAsInt)
                .description("Topic limit (--max-topics); beyond it 503").register(registry);
    }

    /**
     * Adds the meters of a part of the relay that reports its own (the cluster link, the liveness
     * probes, 1:1 sessions), keeping it alive as long as the registry: Micrometer holds the objects
     * behind gauges and function counters weakly.
     */
    public void bind(MeterBinder part) {
        bound.add(requireNonNull(part, "part"));
        part.bindTo(registry);
    }

}
