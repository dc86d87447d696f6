package dev.crossbar.core.route;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.schema.Schema;

/**
 * Identifies a topic: its schema and its name. Two schemas never share a topic, so the 1:N stream
 * {@code cam} ({@code /in/cam}, {@code /out/cam}) and the N:N topic {@code /cam} never mix.
 */
public record TopicKey(Schema schema, String name) {

    public TopicKey {
        requireNonNull(schema, "schema");
        requireNonNull(name, "name");
    }

    // equals, hashCode and toString by hand: a record's own link through invokedynamic the first
    // time they run, which cost a fresh relay's first client milliseconds of its handshake (the key
    // is looked up while the client joins).
    @Override
    public boolean equals(Object o) {
        return o instanceof TopicKey k && schema.equals(k.schema) && name.equals(k.name);
    }

    @Override
    public int hashCode() {
        return 31 * schema.hashCode() + name.hashCode();
    }

    @Override
    public String toString() {
        return schema.name() + " " + name;
    }
}
