package dev.crossbar.server.stats;

import java.util.List;
import java.util.Locale;

/** Which nodes a stats socket shows, chosen by the {@code scope} query parameter of {@code /ws}. */
public enum StatsScope {

    /** The default: this node only, as {@link Snapshot}s with every client row. */
    LOCAL,

    /**
     * Every node of the cluster, as {@link ClusterSnapshot}s (topic summaries per node); client rows
     * one topic at a time, on request. A node without {@code --nats} is a cluster of one.
     */
    CLUSTER;

    /** The query parameter that selects the scope. */
    public static final String PARAMETER = "scope";

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The scope a {@code scope} parameter asks for; {@link #LOCAL} when absent.
     *
     * @throws IllegalArgumentException naming the value and the choices
     */
    static StatsScope of(List<String> values) {
        if (values == null || values.isEmpty()) {
            return LOCAL;
        }
        String v = values.get(0);
        for (StatsScope s : values()) {
            if (s.label().equals(v)) {
                return s;
            }
        }
        throw new IllegalArgumentException("scope: '" + v + "' (expected: local or cluster)");
    }
}
