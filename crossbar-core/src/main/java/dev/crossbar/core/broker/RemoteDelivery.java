package dev.crossbar.core.broker;

import dev.crossbar.core.route.TopicKey;
import io.netty.buffer.ByteBuf;

/** Where a {@link Broker} hands a message that came from another node: the router's local fan-out. */
@FunctionalInterface
public interface RemoteDelivery {

    /**
     * Relays one whole message from another node to every local receiver of {@code topic}.
     * Ownership: takes the caller's reference to {@code payload}. Any thread; never blocks.
     *
     * @return the number of local receivers the message was queued for (0 if there were none)
     */
    int deliver(TopicKey topic, boolean text, ByteBuf payload);

    /**
     * Node {@code node}'s receivers of {@code topic} hold its senders back, or no longer do (see
     * {@link Broker#holdBack}). A hold is repeated while it lasts. Any thread; never blocks.
     */
    default void holdBack(TopicKey topic, String node, boolean held) {
    }

    /** Releases holds from other nodes not repeated within {@code maxAgeNanos}: their node is gone. */
    default void expireHolds(long maxAgeNanos) {
    }

    /**
     * The link to other nodes has room again (or is down, and holding for it would hold for
     * nothing): senders held for it may be read. Called on the broker's thread, repeatedly while
     * the link has room; cheap when nothing is held.
     */
    default void linkRelieved() {
    }

    /**
     * A lossless stream of {@code topic} lost messages that cannot be sent again: every local
     * member that receives it is closed, saying {@code reason}, and so are those that send on it
     * when {@code senders} (this node published the messages that were lost). Any thread; never
     * blocks.
     */
    default void broken(TopicKey topic, boolean senders, String reason) {
    }
}
