package dev.crossbar.server.cluster;

import dev.crossbar.core.broker.RemoteDelivery;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.schema.ManyToMany;
import dev.crossbar.core.schema.OneToMany;
import dev.crossbar.core.schema.Schema;
import io.nats.client.Connection;
import io.nats.client.Message;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Lossless streams across nodes: which of this node's {@code slow=backpressure} topics its receivers
 * hold back, told to the other nodes on one subject ({@value #SUBJECT}), so that each holds its own
 * senders of the topic too; and theirs, handed to the router.
 *
 * <p>A signal is one line, {@code <1|0> <node>}, then the schema's name and the topic's name on lines
 * of their own. A hold is repeated every {@link #REPEAT_NANOS} while it lasts and one not repeated
 * for {@link #EXPIRE_NANOS} is released, so a node that goes away cannot hold the cluster forever.
 * Holds are rare (a receiver crossing its bound), so one subject for all topics costs little.
 *
 * <p>Engine thread only, but {@link #onMessage}, on the NATS dispatcher thread.
 */
final class HoldSignals {

    static final String SUBJECT = "crossbar.hold";
    static final long REPEAT_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final long EXPIRE_NANOS = TimeUnit.SECONDS.toNanos(4);

    private final String nodeName;
    private final Set<TopicKey> heldHere = new LinkedHashSet<>();
    private long lastRepeat;

    HoldSignals(String nodeName) {
        this.nodeName = nodeName;
    }

    /** This node's receivers of {@code key} hold it back, or no longer do: tell the others now. */
    void changed(Connection c, TopicKey key, boolean held) {
        if (held) {
            heldHere.add(key);
        } else {
            heldHere.remove(key);
        }
        c.publish(SUBJECT, encode(key, held));
    }

    /** Every pass of the engine: repeat this node's holds, expire the others' that were not repeated. */
    void tick(Connection c, RemoteDelivery delivery) {
        long now = System.nanoTime();
        if (now - lastRepeat < REPEAT_NANOS) {
            return;
        }
        lastRepeat = now;
        for (TopicKey key : heldHere) {
            c.publish(SUBJECT, encode(key, true));
        }
        delivery.expireHolds(EXPIRE_NANOS);
    }

    /** A signal from another node (the connection does not echo this node's own). */
    static void onMessage(Message m, RemoteDelivery delivery) {
        String[] lines = new String(m.getData(), StandardCharsets.UTF_8).split("\n", 3);
        if (lines.length != 3 || lines[0].length() < 3 || lines[0].charAt(1) != ' ') {
            return; // not ours: ignore rather than guess
        }
        Schema schema = lines[1].equals(OneToMany.INSTANCE.name()) ? OneToMany.INSTANCE
                : lines[1].equals(ManyToMany.INSTANCE.name()) ? ManyToMany.INSTANCE : null;
        if (schema == null) {
            return;
        }
        delivery.holdBack(new TopicKey(schema, lines[2]), lines[0].substring(2), lines[0].charAt(0) == '1');
    }

    private byte[] encode(TopicKey key, boolean held) {
        return ((held ? "1 " : "0 ") + nodeName + "\n" + key.schema().name() + "\n" + key.name())
                .getBytes(StandardCharsets.UTF_8);
    }
}
