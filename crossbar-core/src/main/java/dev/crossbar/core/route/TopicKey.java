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

    @Override
    public String toString() {
        return schema.name() + " " + name;
    }
}
