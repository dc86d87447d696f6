package dev.crossbar.core.stats;

import dev.crossbar.core.route.Route;
import dev.crossbar.core.schema.Role;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What connections that have left had counted, summed per schema and role, so relay-wide totals
 * (the Prometheus counters) only ever grow although connections and whole topics come and go.
 *
 * <p>Written once per departure, read by metrics scrapes; both are rare next to messages, so a
 * lock is simpler than anything cleverer and costs nothing on the message path.
 */
public final class DepartedTraffic {

    /** A schema (by name) and a role: the bounded key every relay-wide total is kept under. */
    public record Kind(String schema, Role role) {

        // By hand, as TopicKey's: a record's own methods link through invokedynamic on first use,
        // milliseconds that a fresh relay's event loop would spend as its first client leaves.
        @Override
        public boolean equals(Object o) {
            return o instanceof Kind k && Objects.equals(schema, k.schema) && role == k.role;
        }

        @Override
        public int hashCode() {
            return 31 * Objects.hashCode(schema) + Objects.hashCode(role);
        }

        @Override
        public String toString() {
            return schema + " " + role;
        }
    }

    private final Map<Kind, Traffic> totals = new HashMap<>();

    /** Adds what a departing connection counted. */
    public synchronized void add(Route route, ConnectionStats stats) {
        totals.merge(new Kind(route.schema().name(), route.role()), Traffic.of(stats), Traffic::plus);
    }

    /** What departed connections of this kind counted, or {@link Traffic#ZERO}. */
    public synchronized Traffic get(Kind kind) {
        return totals.getOrDefault(kind, Traffic.ZERO);
    }

    /** What every departed connection counted. */
    public synchronized Traffic total() {
        Traffic sum = Traffic.ZERO;
        for (Traffic t : totals.values()) {
            sum = sum.plus(t);
        }
        return sum;
    }
}
