package dev.crossbar.server.cluster;

import dev.crossbar.core.broker.RemoteDelivery;
import dev.crossbar.core.route.TopicKey;
import io.nats.client.Message;
import io.nats.client.MessageHandler;
import io.nats.client.Subscription;

/**
 * This node's subscription to one topic's subject: checks each NATS message's envelope, puts chunks
 * back together and hands whole messages to the router's local fan-out.
 *
 * <p>Runs on the NATS dispatcher thread; {@link #close} comes from the broker's engine thread, hence
 * the lock (uncontended in practice). Ownership: the payload handed to {@link RemoteDelivery} wraps the
 * NATS message's array and is the router's to release.
 */
final class TopicSubscription implements MessageHandler {

    private final TopicKey key;
    private final String keyString;
    private final boolean hashed;
    private final Reassembler reassembler;
    private final RemoteDelivery delivery;
    private final NatsStats stats;
    private final WarnOnce warnings;
    private Subscription subscription;
    private boolean closed;

    TopicSubscription(TopicKey key, String subject, Reassembler reassembler, RemoteDelivery delivery,
                      NatsStats stats, WarnOnce warnings) {
        this.key = key;
        this.keyString = key.toString();
        this.hashed = Subjects.isHashed(subject);
        this.reassembler = reassembler;
        this.delivery = delivery;
        this.stats = stats;
        this.warnings = warnings;
    }

    void bind(Subscription s) {
        this.subscription = s;
    }

    Subscription subscription() {
        return subscription;
    }

    @Override
    public synchronized void onMessage(Message msg) {
        if (closed) {
            return;
        }
        byte[] data = msg.getData();
        Envelope e;
        try {
            e = Envelope.parse(data);
        } catch (IllegalArgumentException ex) {
            stats.recordRejected();
            warnings.warn("rejected", "dropping a NATS message on {} that is not a Crossbar envelope: {}",
                    msg.getSubject(), ex.getMessage());
            return;
        }
        // On a hashed subject the key must be there and match; elsewhere the subject alone is exact.
        if (hashed ? !keyString.equals(e.key) : e.key != null && !keyString.equals(e.key)) {
            stats.recordRejected();
            warnings.warn("collision", "dropping a NATS message on {} sent for another topic", msg.getSubject());
            return;
        }
        Reassembler.Whole whole = reassembler.accept(e, data, System.nanoTime());
        if (whole != null) {
            stats.recordReceived(whole.payload().readableBytes());
            delivery.deliver(key, whole.text(), whole.payload());
        }
    }

    synchronized void close() {
        closed = true;
        reassembler.close();
    }
}
