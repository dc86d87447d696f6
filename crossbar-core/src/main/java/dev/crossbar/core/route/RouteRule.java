package dev.crossbar.core.route;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.schema.Role;
import dev.crossbar.core.schema.Schema;

/**
 * Maps paths that start with {@code prefix} (for example {@code /in/}) to a schema and a role; the
 * rest of the path names the stream. Paths no rule matches are N:N topics.
 */
public record RouteRule(String prefix, Schema schema, Role role) {

    public RouteRule {
        requireNonNull(prefix, "prefix");
        requireNonNull(schema, "schema");
        requireNonNull(role, "role");
        if (!prefix.startsWith("/") || !prefix.endsWith("/") || prefix.length() < 3) {
            throw new IllegalArgumentException("prefix: " + prefix + " (expected: /name/)");
        }
    }
}
