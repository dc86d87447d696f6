package dev.crossbar.server.metrics;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.relay.Member;
import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.route.RouteRule;
import dev.crossbar.core.schema.ManyToMany;
import dev.crossbar.core.schema.Role;
import dev.crossbar.core.stats.DepartedTraffic.Kind;
import dev.crossbar.core.stats.Traffic;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Relay-wide traffic and connection counts per {@link Kind} (schema and role), read for a scrape:
 * the live members' counters plus what departed members counted.
 *
 * <p>One scrape reads a dozen counters; the tally walks the members once and serves the others
 * from that walk for {@link #MAX_AGE_NANOS}. Counters are clamped so they never go back: a member
 * leaving during the walk may be seen both live and departed, and a Prometheus counter that
 * dropped would read as a restart.
 */
final class TrafficTally {

    /** How long one walk over the members serves further reads; far shorter than any scrape interval. */
    static final long MAX_AGE_NANOS = 250_000_000L;

    /** The kinds every relay has: N:N members, and each role of the default route rules. */
    static final List<Kind> KINDS;

    static {
        List<Kind> kinds = new ArrayList<>();
        kinds.add(new Kind(ManyToMany.INSTANCE.name(), Role.MEMBER));
        for (RouteRule r : RouteParser.DEFAULT_RULES) {
            kinds.add(new Kind(r.schema().name(), r.role()));
        }
        KINDS = List.copyOf(kinds);
    }

    private final TopicRegistry topics;
    private final Map<Kind, Traffic> traffic = new HashMap<>();
    private final Map<Kind, Integer> connections = new HashMap<>();
    private final Map<String, Integer> topicCounts = new HashMap<>();
    private long takenAtNanos;
    private boolean taken;

    TrafficTally(TopicRegistry topics) {
        this.topics = requireNonNull(topics, "topics");
    }

    synchronized Traffic traffic(Kind kind) {
        refresh();
        return traffic.getOrDefault(kind, Traffic.ZERO);
    }

    synchronized int connections(Kind kind) {
        refresh();
        return connections.getOrDefault(kind, 0);
    }

    synchronized int topics(String schema) {
        refresh();
        return topicCounts.getOrDefault(schema, 0);
    }

    private void refresh() {
        long now = System.nanoTime();
        if (taken && now - takenAtNanos < MAX_AGE_NANOS) {
            return;
        }
        Map<Kind, Traffic> live = new HashMap<>();
        connections.clear();
        topicCounts.clear();
        for (Topic t : topics.topics()) {
            topicCounts.merge(t.key().schema().name(), 1, Integer::sum);
            for (Member m : t.members()) {
                Kind k = new Kind(m.route().schema().name(), m.route().role());
                live.merge(k, Traffic.of(m.stats()), Traffic::plus);
                connections.merge(k, 1, Integer::sum);
            }
        }
        for (Kind k : KINDS) {
            Traffic current = live.getOrDefault(k, Traffic.ZERO).plus(topics.departed().get(k));
            traffic.merge(k, current, TrafficTally::atLeast);
        }
        takenAtNanos = now;
        taken = true;
    }

    /** Each counter the larger of before and now, so none ever decreases. */
    private static Traffic atLeast(Traffic before, Traffic now) {
        return new Traffic(Math.max(before.messagesIn(), now.messagesIn()), Math.max(before.bytesIn(), now.bytesIn()),
                Math.max(before.messagesOut(), now.messagesOut()), Math.max(before.bytesOut(), now.bytesOut()),
                Math.max(before.dropped(), now.dropped()), Math.max(before.refused(), now.refused()));
    }
}
