package dev.crossbar.core.broker;

import dev.crossbar.core.route.TopicKey;
import io.netty.buffer.ByteBuf;

/**
 * Carries a node's messages to the other nodes of a cluster, and theirs to it.
 *
 * <p>The contract that keeps each message crossing each node link once:
 * <ul>
 *   <li>{@link #interest} when the node's first local receiver of a topic joins and
 *       {@link #noInterest} when its last one leaves. The registry calls both inside its per-topic
 *       lock, so for one topic the calls alternate and arrive in the order the changes happened.</li>
 *   <li>{@link #publish} once per message a local member may send, whatever the number of local
 *       receivers; the broker must not hand the message back to this node.</li>
 *   <li>Messages from other nodes go to the {@link RemoteDelivery} given to the implementation,
 *       which fans them out to every local receiver (there is no local sender to skip).</li>
 * </ul>
 *
 * <p>Every method is called on an event loop and must not block: an implementation queues the work
 * (bounded) and does its I/O on its own threads.
 */
public interface Broker {

    /** One node, no cluster: every method does nothing, and the router skips {@link #publish}. */
    Broker LOCAL = new Broker() {
        @Override
        public void interest(TopicKey topic) {
        }

        @Override
        public void noInterest(TopicKey topic) {
        }

        @Override
        public void publish(TopicKey topic, boolean text, ByteBuf payload) {
            payload.release();
        }

        @Override
        public String toString() {
            return "local";
        }
    };

    /** This node now has a receiver on {@code topic}: start receiving its messages from other nodes. */
    void interest(TopicKey topic);

    /** This node's last receiver on {@code topic} has left: stop receiving its messages. */
    void noInterest(TopicKey topic);

    /**
     * As {@link #interest(TopicKey)}, saying whether {@code topic} is a {@code slow=backpressure}
     * (lossless) stream, whose messages the broker must not lose on the way from other nodes
     * without saying so. The registry calls this one; the default ignores the difference.
     */
    default void interest(TopicKey topic, boolean lossless) {
        interest(topic);
    }

    /**
     * Tells the other nodes that this node's receivers of a {@code slow=backpressure} topic hold its
     * senders back ({@code held}) or no longer do, so that they hold theirs too: a lossless stream
     * is held back across the cluster, not only on the node whose receiver is slow. Called when the
     * local state changes; the broker repeats a hold while it lasts, so a node that disappears
     * cannot hold the others forever.
     */
    default void holdBack(TopicKey topic, boolean held) {
    }

    /**
     * This node now has senders on the {@code slow=backpressure} topic ({@code on}), or no longer
     * has: listen for other nodes' {@link #holdBack} signals for it, or stop. Called inside the
     * registry's per-topic lock, like {@link #interest}.
     */
    default void holdInterest(TopicKey topic, boolean on) {
    }

    /**
     * Sends one whole message to the other nodes. Ownership: takes the caller's reference to
     * {@code payload} and releases it, whether the message was sent or dropped.
     */
    void publish(TopicKey topic, boolean text, ByteBuf payload);

    /**
     * As {@link #publish(TopicKey, boolean, ByteBuf)}, for a message of a {@code slow=backpressure}
     * stream when {@code lossless}: the broker delivers it to every node with receivers, or tells
     * them all it could not ({@link RemoteDelivery#broken}). The router calls this one; the
     * default treats every stream alike. Same ownership.
     */
    default void publish(TopicKey topic, boolean text, ByteBuf payload, boolean lossless) {
        publish(topic, text, payload);
    }

    /**
     * Whether the link to the other nodes is behind: messages for them wait past half its bound
     * while it is up. The router then holds a {@code slow=backpressure} topic's senders, as it does
     * for a slow local receiver, until the broker calls {@link RemoteDelivery#linkRelieved}: a
     * lossless stream slows to what the link carries instead of losing messages at its bound.
     */
    default boolean congested() {
        return false;
    }
}
