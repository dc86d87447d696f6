package dev.crossbar.core.replay;

import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.Map;

/**
 * What one topic keeps for newcomers. Every method runs under the topic's monitor (publishes from
 * several event loops and joins are serialised there), so implementations need no locking of their
 * own.
 */
public interface StreamMemory {

    /** A publisher key for messages from other nodes, which have no local member. */
    Object REMOTE = new Object() {
        @Override
        public String toString() {
            return "remote";
        }
    };

    /**
     * Remembers a message the topic is about to relay. Ownership: {@code payload} is borrowed; an
     * implementation that keeps it takes its own copy or reference.
     *
     * @return where in the message a receiver may start (a keyframe's first packet), or -1 when
     *         starting there means nothing to this stream
     */
    int record(Object publisher, boolean text, ByteBuf payload);

    /** The publisher has left: nothing of it is replayed any more. */
    void forget(Object publisher);

    /** What a newcomer gets first, oldest first per publisher; the caller releases each payload. */
    List<Replayed> replay();

    /** Releases everything held; the topic is gone. */
    void release();

    /** For statistics: what is held now ({@code messages}, {@code bytes}, and the kind's own). */
    Map<String, Object> describe(long nowNanos);
}
