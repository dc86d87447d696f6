package dev.crossbar.server.cluster;

import dev.crossbar.core.broker.RemoteDelivery;
import dev.crossbar.core.route.TopicKey;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Subscription;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Lossless streams across nodes. A node whose receivers hold a {@code slow=backpressure} topic back
 * says so on the topic's hold subject ({@link Subjects#holdSubject}); the nodes with senders on that
 * topic listen there and hold their senders too. So a slow subscriber on one node slows a publisher
 * on another, and the messages in between stay bounded.
 *
 * <p>A signal is {@code 1 <node>} (holding) or {@code 0 <node>} (released). A hold is repeated every
 * {@link #REPEAT_NANOS} while it lasts, and one not repeated for {@link #EXPIRE_NANOS} is released,
 * so a node that goes away cannot hold the cluster forever.
 *
 * <p>Engine thread only; the subscriptions' handlers run on the NATS dispatcher thread and only call
 * the router.
 */
final class HoldSignals {

    static final long REPEAT_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final long EXPIRE_NANOS = TimeUnit.SECONDS.toNanos(4);

    private final String nodeName;
    private final RemoteDelivery delivery;
    private final Dispatcher dispatcher;
    /** Topics this node's receivers hold back now. */
    private final Set<TopicKey> heldHere = new LinkedHashSet<>();
    /** Topics this node has senders on, listening for the others' holds. */
    private final Map<TopicKey, Subscription> listening = new HashMap<>();
    private long lastRepeat;

    HoldSignals(String nodeName, RemoteDelivery delivery, Dispatcher dispatcher) {
        this.nodeName = nodeName;
        this.delivery = delivery;
        this.dispatcher = dispatcher;
    }

    /** This node's receivers of {@code key} hold it back, or no longer do: tell the others now. */
    void changed(Connection c, TopicKey key, boolean held) {
        if (held) {
            heldHere.add(key);
        } else {
            heldHere.remove(key);
        }
        c.publish(Subjects.holdSubject(key), signal(held));
    }

    /** This node has senders on {@code key} ({@code on}) or no longer has: listen for holds, or stop. */
    void listen(TopicKey key, boolean on) {
        if (on && !listening.containsKey(key)) {
            listening.put(key, dispatcher.subscribe(Subjects.holdSubject(key), m -> {
                String s = new String(m.getData(), StandardCharsets.UTF_8);
                if (s.length() > 2 && s.charAt(1) == ' ') {
                    delivery.holdBack(key, s.substring(2), s.charAt(0) == '1');
                }
            }));
        } else if (!on) {
            Subscription s = listening.remove(key);
            if (s != null) {
                dispatcher.unsubscribe(s);
            }
        }
    }

    /** Every pass of the engine: repeat this node's holds, expire the others' that were not repeated. */
    void tick(Connection c) {
        long now = System.nanoTime();
        if (now - lastRepeat < REPEAT_NANOS) {
            return;
        }
        lastRepeat = now;
        for (TopicKey key : heldHere) {
            c.publish(Subjects.holdSubject(key), signal(true));
        }
        delivery.expireHolds(EXPIRE_NANOS);
    }

    /** Topics this node listens on for holds, to listen again after a new connection. */
    Set<TopicKey> listening() {
        return listening.keySet();
    }

    private byte[] signal(boolean held) {
        return ((held ? "1 " : "0 ") + nodeName).getBytes(StandardCharsets.UTF_8);
    }
}
