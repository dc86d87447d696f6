package dev.crossbar.server.stats;

import java.util.List;
import java.util.Locale;

/** What a stats socket sends, chosen by the {@code format} query parameter of {@code /ws}. */
public enum StatsFormat {

    /**
     * The default: one JSON {@link Snapshot} per message, on connect, every stats interval, and
     * whenever the client sends any text message.
     */
    SNAPSHOT,

    /**
     * The original crossbar's protocol, for dashboards written against it: nothing until the client
     * sends a message; then one JSON message per relay client (the {@code clients} entries of a
     * snapshot), and nothing if there are no clients.
     */
    CLIENTS;

    /** The query parameter that selects the format. */
    public static final String PARAMETER = "format";

    /** Lower-case name used in the query string. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The format a {@code format} parameter asks for; {@link #SNAPSHOT} when absent.
     *
     * @throws IllegalArgumentException naming the value and the choices
     */
    static StatsFormat of(List<String> values) {
        if (values == null || values.isEmpty()) {
            return SNAPSHOT;
        }
        String v = values.get(0);
        for (StatsFormat f : values()) {
            if (f.label().equals(v)) {
                return f;
            }
        }
        throw new IllegalArgumentException("format: '" + v + "' (expected: snapshot or clients)");
    }
}
