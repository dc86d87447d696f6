package dev.crossbar.server.stats;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.relay.Member;
import dev.crossbar.core.route.StreamOptions;
import dev.crossbar.core.route.StreamRule;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.schema.OneToMany;
import dev.crossbar.core.schema.Role;
import dev.crossbar.core.stats.ClientIdentity;
import dev.crossbar.core.stats.ConnectionStats;
import dev.crossbar.core.stats.Traffic;
import dev.crossbar.core.topic.HoldBack;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.stats.Snapshot.ClientView;
import dev.crossbar.server.stats.Snapshot.Flow;
import dev.crossbar.server.stats.Snapshot.LegacyFlow;
import dev.crossbar.server.stats.Snapshot.LegacyStats;
import dev.crossbar.server.stats.Snapshot.Members;
import dev.crossbar.server.stats.Snapshot.StreamView;
import dev.crossbar.server.stats.Snapshot.TopicView;
import dev.crossbar.server.stats.Snapshot.Totals;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.function.Predicate;

/**
 * Builds {@link Snapshot}s from the live topics and measures rates between them.
 *
 * <p>The message path only counts (see {@code ConnectionStats}); everything derived (rates, means,
 * "time since last") is computed here, from the difference between the counters now and at the
 * previous tick. A tick (every stats interval) moves each connection's and topic's window forward;
 * a snapshot asked for between ticks measures from the last tick to now, or, if that is shorter
 * than {@link #MIN_RATE_WINDOW_NANOS}, repeats the last tick's rates rather than report noise.
 *
 * <p>Confined to the stats thread: no field is shared, so nothing here is synchronised. The
 * counters it reads are written by the event loops with opaque stores and are read whole.
 */
final class Snapshotter {

    /** Shortest window a rate is measured over; a shorter one would mostly measure jitter. */
    static final long MIN_RATE_WINDOW_NANOS = 500_000_000L;

    private static final double NANOS_PER_SECOND = 1e9;
    private static final Comparator<ClientView> CLIENT_ORDER = Comparator.comparing(ClientView::topic)
            .thenComparing(ClientView::schema)
            .thenComparing(c -> roleOrder(c.role()))
            .thenComparing(ClientView::connectedAt)
            .thenComparing(ClientView::id);
    private static final Comparator<TopicView> TOPIC_ORDER = Comparator.comparing(TopicView::topic)
            .thenComparing(TopicView::schema);

    private final TopicRegistry registry;
    private final String node;
    private final long startedAtMillis;
    private final long startedAtNanos;
    private final double intervalSeconds;
    private final IntSupplier statsSockets;
    private final boolean clustered;
    private final SessionSource sessions;

    /** Counters and rates at the last tick, per member and per topic (by identity). */
    private IdentityHashMap<Object, Sample> samples = new IdentityHashMap<>();

    /** Counters at the start of a window and the rates measured over the window before it. */
    private record Sample(long nanos, Traffic traffic, double rateIn, double byteRateIn, double rateOut,
                          double byteRateOut) {
    }

    Snapshotter(TopicRegistry registry, String node, long startedAtMillis, long startedAtNanos, double intervalSeconds,
                IntSupplier statsSockets, boolean clustered, SessionSource sessions) {
        this.clustered = clustered;
        this.sessions = requireNonNull(sessions, "sessions");
        this.registry = requireNonNull(registry, "registry");
        this.node = requireNonNull(node, "node");
        this.startedAtMillis = startedAtMillis;
        this.startedAtNanos = startedAtNanos;
        this.intervalSeconds = intervalSeconds;
        this.statsSockets = requireNonNull(statsSockets, "statsSockets");
    }

    /**
     * A snapshot of every topic and connection now, with client details whole (readers get
     * {@link ClientDetails#apply} of it); rates over the window since the last {@link #tick}.
     */
    Snapshot take() {
        return take(null);
    }

    /**
     * As {@link #take()}, with client rows only for the topics {@code rowsFor} accepts (null:
     * every topic). Topic summaries are always complete; leaving rows out is what keeps a cluster
     * summary cheap for a node with 100k connections.
     */
    Snapshot take(Predicate<TopicKey> rowsFor) {
        long nowNanos = System.nanoTime();
        long nowMillis = System.currentTimeMillis();
        List<TopicView> topics = new ArrayList<>();
        List<ClientView> clients = new ArrayList<>();
        Traffic live = Traffic.ZERO;
        int connections = 0;

        for (Topic topic : registry.topics()) {
            Member[] members = topic.members();
            long[] t = topic.totals();
            Traffic topicTraffic = new Traffic(t[0], t[1], t[2], t[3], t[4], t[5]);
            Sample topicRates = measure(topic, createdNanos(topic, nowNanos, nowMillis), topicTraffic, nowNanos, null);

            int publishers = 0;
            int subscribers = 0;
            int others = 0;
            long lastIn = 0;
            long lastOut = 0;
            String display = displayName(topic.key());
            boolean rows = rowsFor == null || rowsFor.test(topic.key());
            for (Member m : members) {
                ConnectionStats s = m.stats();
                Traffic traffic = Traffic.of(s);
                live = live.plus(traffic);
                connections++;
                switch (m.route().role()) {
                    case PUBLISHER -> publishers++;
                    case SUBSCRIBER -> subscribers++;
                    default -> others++;
                }
                lastIn = Math.max(lastIn, s.lastInNanos());
                lastOut = Math.max(lastOut, s.lastOutNanos());
                if (rows) {
                    Sample rates = measure(m, s.connectedAtNanos(), traffic, nowNanos, null);
                    clients.add(client(m, display, traffic, rates, nowNanos, node));
                }
            }
            topics.add(new TopicView(display, topic.key().name(), topic.key().schema().name(),
                    Instant.ofEpochMilli(topic.createdAtMillis()).toString(),
                    new Members(publishers, subscribers, others),
                    flow(topicTraffic.messagesIn(), topicTraffic.bytesIn(), topicRates.rateIn(), topicRates.byteRateIn(),
                            lastIn, nowNanos),
                    flow(topicTraffic.messagesOut(), topicTraffic.bytesOut(), topicRates.rateOut(),
                            topicRates.byteRateOut(), lastOut, nowNanos),
                    topicTraffic.dropped(), topicTraffic.refused(), streamView(topic, nowNanos)));
        }
        topics.sort(TOPIC_ORDER);
        clients.sort(CLIENT_ORDER);
        Traffic all = live.plus(registry.departed().total());
        Totals totals = new Totals(connections, topics.size(), statsSockets.getAsInt(), all.messagesIn(),
                all.bytesIn(), all.messagesOut(), all.bytesOut(), all.dropped(), all.refused());
        return new Snapshot(node, Instant.ofEpochMilli(nowMillis).toString(),
                Instant.ofEpochMilli(startedAtMillis).toString(), (nowNanos - startedAtNanos) / NANOS_PER_SECOND,
                intervalSeconds, ClientDetails.FULL.label(), clustered, totals, topics, clients, null,
                sessions.sessions(nowNanos));
    }

    /**
     * The periodic tick: starts the next rate window of every topic and connection, and returns
     * each topic's point for the charts. It builds no views: on a relay nobody is watching, which is
     * most of a relay's life, this is all the statistics cost, every interval, for every connection.
     */
    List<TopicTrends.Point> tick() {
        long nowNanos = System.nanoTime();
        long nowMillis = System.currentTimeMillis();
        IdentityHashMap<Object, Sample> next = new IdentityHashMap<>(samples.size());
        List<TopicTrends.Point> points = new ArrayList<>();
        for (Topic topic : registry.topics()) {
            long[] t = topic.totals();
            Traffic traffic = new Traffic(t[0], t[1], t[2], t[3], t[4], t[5]);
            Sample rates = measure(topic, createdNanos(topic, nowNanos, nowMillis), traffic, nowNanos, next);
            points.add(new TopicTrends.Point(topic.key().schema().name(), displayName(topic.key()),
                    round(rates.rateIn()), round(rates.byteRateOut())));
            for (Member m : topic.members()) {
                ConnectionStats s = m.stats();
                measure(m, s.connectedAtNanos(), Traffic.of(s), nowNanos, next);
            }
        }
        samples = next;
        return points;
    }

    /** When {@code topic} was created, on the {@link System#nanoTime()} scale. */
    private static long createdNanos(Topic topic, long nowNanos, long nowMillis) {
        return nowNanos - (nowMillis - topic.createdAtMillis()) * 1_000_000L;
    }

    /**
     * Rates of {@code key} over the window from its last tick sample (or {@code startNanos}, when
     * it is new) to now. On a tick, records where the next window starts in {@code next}.
     */
    private Sample measure(Object key, long startNanos, Traffic now, long nowNanos,
                           IdentityHashMap<Object, Sample> next) {
        Sample prev = samples.get(key);
        if (prev == null) {
            prev = new Sample(startNanos, Traffic.ZERO, 0, 0, 0, 0);
        }
        long window = nowNanos - prev.nanos();
        if (window < MIN_RATE_WINDOW_NANOS) {
            // Too short to measure: keep the previous rates and let the window grow.
            if (next != null) {
                next.put(key, prev);
            }
            return prev;
        }
        double seconds = window / NANOS_PER_SECOND;
        Traffic before = prev.traffic();
        Sample measured = new Sample(nowNanos, now,
                (now.messagesIn() - before.messagesIn()) / seconds,
                (now.bytesIn() - before.bytesIn()) / seconds,
                (now.messagesOut() - before.messagesOut()) / seconds,
                (now.bytesOut() - before.bytesOut()) / seconds);
        if (next != null) {
            next.put(key, measured);
        }
        return measured;
    }

    private static ClientView client(Member m, String display, Traffic t, Sample rates, long nowNanos, String node) {
        ConnectionStats s = m.stats();
        ClientIdentity who = m.client();
        String remote = who.remoteAddress();
        String userAgent = who.userAgent();
        String id = who.connectionId();
        Flow in = flow(t.messagesIn(), t.bytesIn(), rates.rateIn(), rates.byteRateIn(), s.lastInNanos(), nowNanos);
        Flow out = flow(t.messagesOut(), t.bytesOut(), rates.rateOut(), rates.byteRateOut(), s.lastOutNanos(), nowNanos);
        LegacyStats legacy = new LegacyStats(legacy(in, s.lastInNanos(), nowNanos), legacy(out, s.lastOutNanos(), nowNanos));
        return new ClientView(display, m.route().canSend(), GoFormat.time(s.connectedAtMillis()), remote, userAgent,
                legacy, id, m.route().path(), m.route().schema().name(), m.route().role().label(),
                Instant.ofEpochMilli(s.connectedAtMillis()).toString(),
                (nowNanos - s.connectedAtNanos()) / NANOS_PER_SECOND, in, out, t.dropped(), t.refused(), node,
                who.sub(), who.jti());
    }

    private static Flow flow(long messages, long bytes, double rate, double byteRate, long lastNanos, long nowNanos) {
        return new Flow(messages, bytes, round(rate), round(byteRate), messages == 0 ? 0 : Math.round((double) bytes / messages),
                lastNanos == 0 ? null : round(Math.max(0, nowNanos - lastNanos) / NANOS_PER_SECOND));
    }

    private static LegacyFlow legacy(Flow f, long lastNanos, long nowNanos) {
        String last = lastNanos == 0 ? GoFormat.NEVER : GoFormat.duration(Math.max(0, nowNanos - lastNanos));
        return new LegacyFlow(last, f.meanSize(), f.rate());
    }

    /** Three decimals: enough for a rate or a time, and keeps the JSON short. */
    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    private static StreamView streamView(Topic topic, long nowNanos) {
        StreamRule rule = topic.rule();
        StreamOptions o = topic.options();
        HoldBack hold = topic.holdBack();
        Double heldSeconds = null;
        Map<String, Double> heldBy = null;
        if (hold != null) {
            heldSeconds = seconds(hold.heldNanos(nowNanos));
            heldBy = new LinkedHashMap<>();
            for (Map.Entry<HoldBack.Holder, Long> e : hold.heldBy(nowNanos).entrySet()) {
                heldBy.put(e.getKey().label(), seconds(e.getValue()));
            }
        }
        return new StreamView(rule == null ? null : rule.describe(), rule == null ? null : rule.source(),
                o.start().label(), o.boundsLatency() ? o.maxLatency().toMillis() : null, topic.memoryState(nowNanos),
                o.slow().label(), heldSeconds, heldBy);
    }

    private static double seconds(long nanos) {
        return Math.round(nanos / 1e7) / 100.0;
    }

    /** As the original crossbar named topics: {@code /out/<t>} for both ends of a 1:N stream, the path for N:N. */
    static String displayName(TopicKey key) {
        return key.schema() instanceof OneToMany ? "/out/" + key.name() : key.name();
    }

    private static int roleOrder(String role) {
        return role.equals(Role.PUBLISHER.label()) ? 0 : role.equals(Role.MEMBER.label()) ? 1 : 2;
    }
}
