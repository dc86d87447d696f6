package dev.crossbar.core.schema;

/**
 * A streaming schema: which members of a topic may send, and which receive what is sent.
 *
 * <p>Every schema shares two rules that are not up to it: a message is never echoed to its own
 * sender, and a message from a role that may not send is dropped and counted. Adding a schema is
 * one implementation of this interface plus a {@link dev.crossbar.core.route.RouteRule}.
 */
public interface Schema {

    /** Short stable name, used in topic keys, JSON, docs and metric tags ("n:n", "1:n"). */
    String name();

    /** Whether messages sent by a member in {@code role} are relayed at all. */
    boolean canSend(Role role);

    /** Whether a member in {@code role} receives the topic's messages. */
    boolean canReceive(Role role);
}
