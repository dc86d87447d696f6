package dev.crossbar.server.session;

import dev.crossbar.core.relay.PreparedFrame;

/**
 * How one receiver takes its stream's messages when it falls behind: dropped whole
 * ({@link LiveDelivery}), skipped forward to stay within a latency bound ({@link LatestDelivery}),
 * or never dropped, holding the senders back ({@link LosslessDelivery}). Chosen once, when the
 * receiver joins, from its stream's rule; the message path asks it nothing else. Used on the
 * receiver's event loop only.
 */
interface DeliveryMode {

    /**
     * Writes (or queues, or drops and counts) one message. The frame is borrowed.
     *
     * @return whether the receiver now needs a flush it did not need before
     */
    boolean deliver(PreparedFrame frame);

    /** The channel's writability changed: the receiver has read below, or written past, its bound. */
    default void writabilityChanged(boolean writable) {
    }

    /** The connection is closing or closed: release what is held, stop timers, let others go. */
    default void end() {
    }
}
