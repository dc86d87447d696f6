package dev.crossbar.core.relay;

import dev.crossbar.core.route.Route;
import dev.crossbar.core.stats.ClientIdentity;
import dev.crossbar.core.stats.ConnectionStats;
import io.netty.util.concurrent.EventExecutor;

/**
 * One connection's place in a topic, as the router sees it. Implemented by the server's session;
 * the core never touches its socket.
 *
 * <p>{@link #deliver} and {@link #flush} are called only on {@link #executor()}.
 */
public interface Member {

    /** The event loop that owns this connection; every write to it happens there. */
    EventExecutor executor();

    Route route();

    ConnectionStats stats();

    /** Who this member is, for statistics; by default an id and nothing else. */
    default ClientIdentity client() {
        return ClientIdentity.anonymous(this);
    }

    /**
     * Whether this connection may send now, beyond what its role allows: access control narrows it
     * (a read-only token on an N:N topic, or a token that has expired). A refused message is
     * dropped and counted like a 1:N subscriber's. Read on {@link #executor()} only.
     */
    default boolean maySend() {
        return true;
    }

    /**
     * Writes one relayed message, without flushing. The frame is borrowed: an implementation that
     * keeps or writes it takes its own {@code retainedDuplicate()}. An implementation that cannot
     * take the whole message (its outbound buffer is over the bound) drops it and counts the drop.
     *
     * @return true if this write left the member needing a {@link #flush()} it did not need before
     */
    boolean deliver(PreparedFrame frame);

    /**
     * Writes one message of this member's replay, the messages a topic kept for newcomers. Not
     * subject to the queue bound: the replay is bounded by what the topic keeps, and a replay with
     * a hole (a keyframe's packets missing) is worse than none.
     *
     * @return as {@link #deliver}
     */
    default boolean deliverReplay(PreparedFrame frame) {
        return deliver(frame);
    }

    /**
     * Stops ({@code true}) or resumes reading this member's messages from its socket, for a
     * lossless stream whose receivers are behind. Called on {@link #executor()}.
     */
    default void holdReading(boolean hold) {
    }

    /** Flushes what {@link #deliver} wrote since the last flush. */
    void flush();

    /**
     * The lossless stream this member is on lost messages that nobody can send again: the
     * connection is closed with a code and {@code reason} that say so, rather than let a hole in
     * the stream pass unseen. Called on {@link #executor()}.
     */
    default void streamBroken(String reason) {
    }
}
