package dev.crossbar.server.pair;

import dev.crossbar.core.route.TopicKey;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * How 1:1 sessions reach the other nodes of a cluster: a client on a node without a host of its
 * stream is offered to a node that has one, whose host then opens the session on the client's node.
 * Only these control messages cross between nodes, never a session's bytes. Implemented over NATS
 * by the cluster package; every method may be called from any thread and never blocks.
 */
public interface SessionCluster extends AutoCloseable {

    /** This node's address as hosts on other nodes reach it, e.g. {@code ws://node-a:8080}. */
    String url();

    /** This node now has a host of {@code stream}: it takes part in that stream's offers. */
    void hosting(TopicKey stream);

    /** This node no longer has a host of {@code stream}. */
    void notHosting(TopicKey stream);

    /**
     * Offers a session to the nodes with hosts of {@code stream}; completes with the id of the host
     * that took it, or exceptionally when no node answers within {@code timeout}.
     */
    CompletableFuture<String> offer(TopicKey stream, Map<String, Object> offer, Duration timeout);

    /** Tells every node that host {@code hostId} of this node went away. */
    void gone(String hostId);

    @Override
    void close();
}
