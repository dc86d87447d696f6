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
}
