package dev.crossbar.core.route;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.schema.Role;
import dev.crossbar.core.schema.Schema;

/**
 * Where a connection belongs: its normalised path, the topic it joins, the schema of that topic
 * and its role in it. {@code /in/cam} and {@code /out/cam} share the topic {@code (1:n, cam)}.
 */
public record Route(String path, TopicKey topic, Role role) {

    public Route {
        requireNonNull(path, "path");
        requireNonNull(topic, "topic");
        requireNonNull(role, "role");
    }

    public Schema schema() {
        return topic.schema();
    }

    /** Whether this connection's messages are relayed (false for a 1:N subscriber). */
    public boolean canSend() {
        return topic.schema().canSend(role);
    }

    /** Whether this connection receives the topic's messages. */
    public boolean canReceive() {
        return topic.schema().canReceive(role);
    }
}
