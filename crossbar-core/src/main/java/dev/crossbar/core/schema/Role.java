package dev.crossbar.core.schema;

/** What a connection does on its topic; the schema decides which roles send and which receive. */
public enum Role {
    /** Sends and receives, as every client of an N:N topic does. */
    MEMBER,
    /** Sends only: the {@code /in/} side of a 1:N stream. */
    PUBLISHER,
    /** Receives only: the {@code /out/} side of a 1:N stream. */
    SUBSCRIBER;

    /** Computed once: statistics ask for it per connection per snapshot. */
    private final String label = name().toLowerCase(java.util.Locale.ROOT);

    /** Lower-case name used in JSON, docs and metric tags. */
    public String label() {
        return label;
    }
}
