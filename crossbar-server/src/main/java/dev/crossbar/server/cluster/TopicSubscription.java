package dev.crossbar.server.cluster;

import dev.crossbar.core.broker.RemoteDelivery;
import dev.crossbar.core.route.TopicKey;
import io.nats.client.Message;
import io.nats.client.MessageHandler;
import io.nats.client.Subscription;

/**
 * This node's subscription to one topic's subject: checks each NATS message's envelope, puts chunks
 * back together and hands whole messages to the router's local fan-out. On a lossless topic, the
 * lossless streams' messages and records go to its {@link Inbox} instead.
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
    /** For a lossless topic; null for others. */
    private final Inbox inbox;
    private Subscription subscription;
    private boolean closed;

    TopicSubscription(TopicKey key, String subject, Reassembler reassembler, RemoteDelivery delivery,
                      NatsStats stats, WarnOnce warnings) {
        this(key, subject, reassembler, null, delivery, stats, warnings);
    }

    /** As above, for a lossless topic when {@code inbox} is not null. */
    TopicSubscription(TopicKey key, String subject, Reassembler reassembler, Inbox inbox, RemoteDelivery delivery,
                      NatsStats stats, WarnOnce warnings) {
        this.inbox = inbox;
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
        if (e.control() || (e.lossless() && inbox != null)) {
            if (inbox != null) {
                try {
                    inbox.accept(e, data, System.nanoTime());
                } catch (IllegalArgumentException ex) {
                    stats.recordRejected();
                    warnings.warn("rejected", "dropping a NATS record on {}: {}", msg.getSubject(), ex.getMessage());
                }
            }
            return; // a record of a lossless stream, on a node that takes the topic as an ordinary one: not a message
        }
        Reassembler.Whole whole = reassembler.accept(e, data, System.nanoTime());
        if (whole != null) {
            stats.recordReceived(whole.payload().readableBytes());
            delivery.deliver(key, whole.text(), whole.payload());
        }
    }

    /** Whether this is a lossless topic's subscription. */
    boolean lossless() {
        return inbox != null;
    }

    /** Lossless: says it is there, and what it has ({@link Inbox#heartbeat}). */
    synchronized void heartbeat() {
        if (!closed && inbox != null) {
            inbox.heartbeat();
        }
    }

    /** Lossless: acknowledgements due and senders' timeouts ({@link Inbox#tick}). */
    synchronized void tick(long nowNanos) {
        if (!closed && inbox != null) {
            inbox.tick(nowNanos);
        }
    }

    synchronized void close() {
        closed = true;
        reassembler.close();
        if (inbox != null) {
            inbox.close();
        }
    }
}
