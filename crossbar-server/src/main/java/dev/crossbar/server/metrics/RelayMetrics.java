package dev.crossbar.server.metrics;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.relay.SharedFrameBuffers;
import dev.crossbar.core.topic.Router;
import dev.crossbar.core.stats.DepartedTraffic.Kind;
import dev.crossbar.core.stats.Traffic;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.cluster.NatsBroker;
import dev.crossbar.server.cluster.NatsStats;
import dev.crossbar.server.http.HandshakeFailures;
import dev.crossbar.server.health.LoopHealth;
import dev.crossbar.server.pair.SessionRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
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
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.channel.EventLoopGroup;
import io.netty.util.internal.PlatformDependent;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.ToLongFunction;

/**
 * The relay's meters, rendered for Prometheus by {@link #scrape()}.
 *
 * <p>Crossbar's own: connections and topics (gauges), messages and payload bytes in and out, drops
 * and refusals (counters that read the live per-connection counters plus those of departed
 * connections, so the message path pays nothing for them), handshake failures by reason, stats
 * sockets and the fan-out backlog. Tags are schema, role and reason only: closed sets. Besides
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
    public static final String PROBE_LATENCY = "crossbar.health.probe.latency";
    public static final String PROBE_LAST_LATENCY = "crossbar.health.probe.latency.last";
    public static final String PROBE_AGE = "crossbar.health.probe.age";
    /** Gauge: the connection limit ({@code --max-connections}), for "near the limit" alerts. */
    public static final String CONNECTIONS_MAX = "crossbar.connections.max";
    /** Gauge: the topic limit ({@code --max-topics}). */
    public static final String TOPICS_MAX = "crossbar.topics.max";
    /** Gauge: 1:N topics whose connected publisher has sent nothing for a minute (see {@link SilentTopics}). */
    public static final String TOPICS_SILENT = "crossbar.topics.silent";
    public static final String SESSION_HOSTS = "crossbar.session.hosts";
    public static final String SESSIONS_OPEN = "crossbar.sessions.open";
    public static final String SESSIONS_WAITING = "crossbar.sessions.waiting";
    public static final String SESSIONS_STARTED = "crossbar.sessions.started";
    public static final String SESSIONS_UNOPENED = "crossbar.sessions.unopened";
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
    /** The limits {@link #bindLimits} registered, kept for the same reason. */
    private int[] limits;
    /** The cluster link whose meters {@link #bindCluster} registered (kept for the same reason). */
    private NatsBroker clusterLink;
    /** The liveness probes {@link #bindHealth} registered (kept for the same reason). */
    private List<LoopHealth.Probe> probes;

    public RelayMetrics(TopicRegistry topics, Router router, HandshakeFailures failures, EventLoopGroup eventLoops,
                        IntSupplier statsSockets) {
        this.router = requireNonNull(router, "router");
        this.failures = requireNonNull(failures, "failures");
        this.statsSockets = requireNonNull(statsSockets, "statsSockets");
        requireNonNull(eventLoops, "eventLoops");
        this.tally = new TrafficTally(requireNonNull(topics, "topics"));
        this.silentTopics = new SilentTopics(topics);
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
        // The allocator the relay's channels actually use (Netty 4.2's default is the adaptive one).
        if (ByteBufAllocator.DEFAULT instanceof ByteBufAllocatorMetricProvider provider) {
            new NettyAllocatorMetrics(provider).bindTo(registry);
        }
        // Frames that receivers share come from a pool of their own (their duplicates are recycled).
        new NettyAllocatorMetrics(SharedFrameBuffers.metrics()).bindTo(registry);
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
    public void bindLimits(int maxConnections, int maxTopics) {
        limits = new int[] {maxConnections, maxTopics};
        Gauge.builder(CONNECTIONS_MAX, limits, l -> l[0])
                .description("Connection limit (--max-connections); beyond it 503").register(registry);
        Gauge.builder(TOPICS_MAX, limits, l -> l[1])
                .description("Topic limit (--max-topics); beyond it 503").register(registry);
    }

    /**
     * Adds the cluster link's counters and state ({@code crossbar.nats.*}), read live from
     * {@code broker}: nothing is counted twice and nothing is tagged by topic.
     */
    public void bindCluster(NatsBroker broker) {
        requireNonNull(broker, "broker");
        clusterLink = broker;
        NatsStats s = broker.stats();
        counter(NatsStats.MESSAGES_OUT, s, NatsStats::messagesOut, "Messages published to NATS");
        counter(NatsStats.BYTES_OUT, s, NatsStats::bytesOut, "Payload bytes published to NATS");
        counter(NatsStats.MESSAGES_IN, s, NatsStats::messagesIn, "Messages received from NATS");
        counter(NatsStats.BYTES_IN, s, NatsStats::bytesIn, "Payload bytes received from NATS");
        counter(NatsStats.DROPPED_OUT, s, NatsStats::droppedOut, "Messages not published: the link's queue was full");
        counter(NatsStats.DROPPED_IN, s, NatsStats::droppedIn, "Messages from NATS refused: larger than this node's limit");
        counter(NatsStats.LOST_IN, s, NatsStats::lostIn, "Messages from other nodes known lost (sequence gaps)");
        counter(NatsStats.DUPLICATES_IN, s, NatsStats::duplicatesIn, "Duplicate messages from NATS discarded");
        counter(NatsStats.REJECTED_IN, s, NatsStats::rejectedIn, "Malformed messages from NATS discarded");
        counter(NatsStats.RECONNECTS, s, NatsStats::reconnects, "Reconnections to NATS");
        counter(NatsStats.RESENT, s, NatsStats::resent, "Lossless messages sent again to nodes that missed them");
        counter(NatsStats.LOSSLESS_LOST, s, NatsStats::losslessLost, "Lossless messages this node found lost for good");
        counter(NatsStats.BROKEN, s, NatsStats::broken, "Times a lossless stream's clients here were closed (4010)");
        Gauge.builder(NatsStats.STATE, broker, b -> b.degradedReason() == null ? 1 : 0)
                .description("1 while the NATS link is up, 0 while degraded").register(registry);
        Gauge.builder(NatsStats.PENDING_BYTES, broker, NatsBroker::pendingBytes)
                .description("Bytes queued for NATS by this node").register(registry);
        Gauge.builder(NatsStats.HELD_BYTES, broker, NatsBroker::losslessHeldBytes)
                .description("Bytes of lossless messages kept until other nodes acknowledge them").register(registry);
    }

    /**
     * Adds the liveness probe's meters, one set per event loop (tag {@code loop}: its index, a set as
     * small as the loop count): latency of each probe from sending to delivery on its loop, the
     * latest one, and how long ago the loop last delivered one.
     */
    public void bindHealth(LoopHealth health) {
        probes = requireNonNull(health, "health").probes();
        for (LoopHealth.Probe p : probes) {
            String loop = Integer.toString(p.loop());
            FunctionTimer.builder(PROBE_LATENCY, p, LoopHealth.Probe::delivered, LoopHealth.Probe::totalLatencyNanos,
                            TimeUnit.NANOSECONDS).tag("loop", loop)
                    .description("Liveness probes through the fan-out to this event loop: sent to delivered")
                    .register(registry);
            Gauge.builder(PROBE_LAST_LATENCY, p, q -> q.lastLatencyNanos() / 1e9).tag("loop", loop).baseUnit("seconds")
                    .description("Latency of the latest liveness probe delivered on this event loop").register(registry);
            Gauge.builder(PROBE_AGE, p, LoopHealth.Probe::ageSeconds).tag("loop", loop).baseUnit("seconds")
                    .description("Time since this event loop last delivered a liveness probe (/healthz: 503 over the limit)")
                    .register(registry);
        }
    }

    /** 1:1 sessions: hosts, open and waiting sessions, offers and those never opened. */
    public void bindSessions(SessionRegistry pairs) {
        Gauge.builder(SESSION_HOSTS, pairs, SessionRegistry::hosts)
                .description("Hosts connected to schema=session streams").register(registry);
        Gauge.builder(SESSIONS_OPEN, pairs, SessionRegistry::open)
                .description("1:1 sessions open (host and client paired)").register(registry);
        Gauge.builder(SESSIONS_WAITING, pairs, SessionRegistry::waiting)
                .description("1:1 sessions offered to a host and not yet opened").register(registry);
        FunctionCounter.builder(SESSIONS_STARTED, pairs, SessionRegistry::started)
                .description("1:1 sessions offered to hosts").register(registry);
        FunctionCounter.builder(SESSIONS_UNOPENED, pairs, SessionRegistry::unopened)
                .description("1:1 sessions that ended before their host opened them").register(registry);
    }

    private void counter(String name, NatsStats stats, ToLongFunction<NatsStats> read, String description) {
        FunctionCounter.builder(name, stats, st -> read.applyAsLong(st)).description(description).register(registry);
    }
}
