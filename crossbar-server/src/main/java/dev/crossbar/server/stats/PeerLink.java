package dev.crossbar.server.stats;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * How the statistics service reaches the other nodes of a cluster (over NATS: see
 * {@code dev.crossbar.server.cluster.NatsStatsLink}). Requests and replies are opaque bytes here
 * (JSON, see {@link PeerMessages}); every callback runs on the statistics thread, never on an event
 * loop or the transport's own thread.
 */
public interface PeerLink extends AutoCloseable {

    /**
     * Starts answering other nodes: each request's bytes go to {@code answer} (on the stats thread),
     * and what it returns (null: nothing) is sent back to the asker.
     */
    void serve(Function<byte[], byte[]> answer);

    /**
     * Asks every other node at once and hands the replies that arrived to {@code done} (on the stats
     * thread) after {@code timeout}, or as soon as {@code expected} replies are in. Never blocks.
     */
    void gather(byte[] request, int expected, Duration timeout, Consumer<List<byte[]>> done);

    /** As {@link #gather}, asking only {@code nodes}, each on its own subject. */
    void ask(Collection<String> nodes, byte[] request, Duration timeout, Consumer<List<byte[]>> done);

    /** Largest reply this link can carry now (the configured bound, and the transport's own). */
    int maxReplyBytes();

    @Override
    void close();
}
