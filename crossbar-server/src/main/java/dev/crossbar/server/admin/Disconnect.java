package dev.crossbar.server.admin;

/**
 * Which connections the administrator cut off ({@code POST /admin/disconnect}): those on a topic (a
 * path, or a stream name covering its {@code /in/}, {@code /out/} and N:N paths), those of a token
 * subject, or one connection by its id as statistics show it. Exactly one is set.
 */
public record Disconnect(String topic, String sub, String connection) {

    /** The close reason every such connection gets with 1008. */
    public static final String REASON = "disconnected by the administrator";

    public Disconnect {
        int given = (topic != null ? 1 : 0) + (sub != null ? 1 : 0) + (connection != null ? 1 : 0);
        if (given != 1) {
            throw new IllegalArgumentException("name exactly one of topic, sub or connection");
        }
    }
}
