package dev.crossbar.server.cluster;

import dev.crossbar.core.broker.RemoteDelivery;
import dev.crossbar.core.route.TopicKey;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's receiving end of a lossless topic's streams, one per subscription: delivers each
 * stream's messages in order and once, acknowledges them to the sending node, asks again for what
 * is missing, and says so when a loss cannot be made good ({@link Verdict}).
 *
 * <p>Per stream, only the next message in order is taken (go-back-N): an earlier one is a
 * duplicate, a later one means some went missing, so it is dropped and the missing one asked for
 * (at most once per {@link #ASK_AGAIN_NANOS}); the sender then sends everything from there again.
 * A stream starts at the first message seen, or, when the sender's hello came first (this
 * subscription was there as the stream began), at the message after the hello: what was lost
 * before the first one seen is asked for, not skipped. The sender's heartbeat
 * ({@link LinkControl#TAIL}) says its last message, so a loss at the end of a stream is asked for
 * too, and whether the stream ended (its senders left): then it is let go, quietly if every message
 * arrived, with a verdict if not. A stream whose sender is silent for the timeout without having
 * ended (its node died, or a link stayed down) ends with a verdict if this subscription delivered
 * some of it or heard it begin: what was sent last may be lost, and its clients must know the
 * stream broke.
 *
 * <p>Not thread-safe: the owning {@link TopicSubscription} calls it under its lock (the NATS
 * dispatcher thread for messages, the broker's engine for timers). Ownership: the payload handed to
 * {@link RemoteDelivery} wraps the NATS messages' arrays (unpooled heap) and is the router's.
 */
final class Inbox {

    private static final Logger log = LoggerFactory.getLogger(Inbox.class);

    /** Streams remembered per subscription, least recently heard forgotten first. */
    static final int MAX_STREAMS = 1024;
    /** A missing message is asked for again after this, if still missing. */
    static final long ASK_AGAIN_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** Acknowledged at once after this many messages or bytes; otherwise at the next tick. */
    static final int ACK_EVERY_MESSAGES = 64;
    static final long ACK_EVERY_BYTES = 256 * 1024;

    /** One sending node's stream. */
    private static final class In {
        final long id;
        /** This node's own stream, come back through a server it left: never delivered. */
        boolean own;
        /** The next message to deliver; 0 before the first. */
        long expected;
        /**
         * The first message this subscription is owed, from the sender's hello heard before any
         * message (it was there when the stream began or came back); 0 when not known.
         */
        long owedFrom;
        long first;
        /** The last message known to exist (seen, or said by a heartbeat). */
        long tail;
        /** The sender said the stream ended. */
        boolean ended;
        String origin = "the sending node";
        long heardNanos;
        long ackedSent;
        int messagesSinceAck;
        long bytesSinceAck;
        long askedFor;
        long askedAtNanos;
        /** A verdict was made or heard: nothing more is taken from it. */
        boolean broken;
        /** The message being put together ({@link #expected}), or null. */
        List<ByteBuf> parts;
        int nextPart;
        int received;
        int total;
        boolean text;

        In(long id) {
            this.id = id;
        }

        long delivered() {
            return expected == 0 ? 0 : expected - 1;
        }
    }

    /** Where this inbox's lines and records go: the node's NATS connection; false if it did not take them. */
    @FunctionalInterface
    interface Publisher {
        boolean publish(String subject, byte[] data);
    }

    private final long receiver;
    private final String node;
    private final TopicKey key;
    private final String subject;
    private final String ackSubject;
    private final byte[] keyBytes;
    private final RemoteDelivery delivery;
    private final Publisher publisher;
    private final NatsStats stats;
    private final int maxMessageBytes;
    private final long maxBufferedBytes;
    private final AtomicLong bufferedBytes;
    private final long timeoutNanos;
    private final OwnStreams own;
    private final Map<Long, In> streams = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, In> eldest) {
            if (size() > MAX_STREAMS) {
                abandon(eldest.getValue());
                return true;
            }
            return false;
        }
    };

    /**
     * @param receiver      this subscription's random id
     * @param bufferedBytes shared count of bytes held for partial messages, bounded by {@code maxBufferedBytes}
     * @param timeoutNanos  how long a stream's sender may be silent before the stream ends
     */
    Inbox(long receiver, String node, TopicKey key, RemoteDelivery delivery, Publisher publisher, NatsStats stats,
          int maxMessageBytes, long maxBufferedBytes, AtomicLong bufferedBytes, long timeoutNanos, OwnStreams own) {
        this.own = own;
        this.receiver = receiver;
        this.node = node;
        this.key = key;
        this.subject = Subjects.subject(key);
        this.ackSubject = Subjects.ackSubject(key);
        this.keyBytes = Subjects.isHashed(subject) ? key.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8) : null;
        this.delivery = delivery;
        this.publisher = publisher;
        this.stats = stats;
        this.maxMessageBytes = maxMessageBytes;
        this.maxBufferedBytes = maxBufferedBytes;
        this.bufferedBytes = bufferedBytes;
        this.timeoutNanos = timeoutNanos;
    }

    /** One NATS message of a lossless stream: a message's chunk, or its sender's control record. */
    void accept(Envelope e, byte[] data, long now) {
        In s = streams.get(e.stream);
        if (s == null) {
            s = new In(e.stream);
            s.own = own.contains(e.stream);
            s.heardNanos = now;
            streams.put(e.stream, s);
        }
        if (s.own) {
            if (!e.control() && e.part == 0) {
                stats.recordDuplicate();
            }
            return;
        }
        if (e.control()) {
            control(LinkControl.parse(e, data), now);
        } else {
            data(e, data, now);
        }
    }

    private void data(Envelope e, byte[] data, long now) {
        In s = streams.get(e.stream);
        s.heardNanos = now;
        s.tail = Math.max(s.tail, e.seq);
        if (s.broken) {
            return;
        }
        if (s.expected == 0) {
            if (s.owedFrom > 0 && e.seq > s.owedFrom) {
                // It heard the stream begin and missed its first messages (a server lost them on
                // the way): it asks for them rather than start later with a hole.
                s.expected = s.owedFrom;
                s.first = s.owedFrom;
                ask(s, now);
                return;
            }
            if (e.part != 0) {
                return; // the middle of a message: the stream starts at the next one
            }
            s.expected = e.seq;
            s.first = e.seq;
        }
        if (e.seq < s.expected) {
            if (e.part == 0) {
                stats.recordDuplicate(); // once per message, however many chunks it took
            }
            return;
        }
        if (e.seq > s.expected) {
            abandon(s);
            ask(s, now);
            return;
        }
        if (e.part == 0) {
            abandon(s); // a first chunk again: the message is being sent again
            if (e.totalLength > maxMessageBytes) {
                verdict(s, s.delivered(), 1, false, "refuses messages over its --max-message");
                return;
            }
            if (!e.more()) {
                if (e.payloadLength != e.totalLength) {
                    stats.recordRejected();
                    return;
                }
                deliver(s, e.text(), Unpooled.wrappedBuffer(data, e.payloadOffset, e.payloadLength));
                return;
            }
            long before = bufferedBytes.getAndAdd(e.totalLength);
            if (before > 0 && before + e.totalLength > maxBufferedBytes) {
                // No room now: asked for again once the sender's wait is over.
                bufferedBytes.getAndAdd(-e.totalLength);
                return;
            }
            s.parts = new ArrayList<>();
            s.parts.add(Unpooled.wrappedBuffer(data, e.payloadOffset, e.payloadLength));
            s.nextPart = 1;
            s.received = e.payloadLength;
            s.total = e.totalLength;
            s.text = e.text();
            return;
        }
        if (s.parts == null || e.part != s.nextPart || s.received + e.payloadLength > s.total) {
            abandon(s);
            ask(s, now);
            return;
        }
        s.parts.add(Unpooled.wrappedBuffer(data, e.payloadOffset, e.payloadLength));
        s.nextPart++;
        s.received += e.payloadLength;
        if (e.more()) {
            return;
        }
        if (s.received != s.total) {
            abandon(s);
            ask(s, now);
            return;
        }
        ByteBuf whole = Unpooled.wrappedBuffer(s.parts.size(), s.parts.toArray(new ByteBuf[0]));
        boolean text = s.text;
        release(s);
        deliver(s, text, whole);
    }

    private void deliver(In s, boolean text, ByteBuf payload) {
        int length = payload.readableBytes();
        s.expected++;
        stats.recordReceived(length);
        delivery.deliver(key, text, payload);
        s.messagesSinceAck++;
        s.bytesSinceAck += length;
        if (s.messagesSinceAck >= ACK_EVERY_MESSAGES || s.bytesSinceAck >= ACK_EVERY_BYTES) {
            ack(s);
        }
    }

    private void ack(In s) {
        s.messagesSinceAck = 0;
        s.bytesSinceAck = 0;
        s.ackedSent = s.delivered();
        publisher.publish(ackSubject, AckLine.ack(receiver, s.id, s.first, s.delivered(), node));
    }

    /** Asks the sender for the next message in order (and all after it), unless just asked. */
    private void ask(In s, long now) {
        if (s.askedFor == s.expected && now - s.askedAtNanos < ASK_AGAIN_NANOS) {
            return;
        }
        s.askedFor = s.expected;
        s.askedAtNanos = now;
        publisher.publish(ackSubject, AckLine.missing(receiver, s.id, s.expected, node));
    }

    private void control(LinkControl c, long now) {
        switch (c.kind) {
            case LinkControl.TAIL -> {
                In s = streams.get(c.stream);
                s.heardNanos = now;
                s.tail = Math.max(s.tail, c.last);
                s.ended = c.ended;
                s.origin = c.node;
                if (s.broken || s.expected == 0) {
                    return;
                }
                if (s.ended) {
                    if (s.tail > s.delivered()) {
                        // Nothing more will come: the sender no longer has them for us.
                        verdict(s, s.delivered(), s.tail - s.delivered(), false, s.origin + "'s stream ended without them");
                    }
                    return; // let go at the timeout, quietly
                } else if (s.tail >= s.expected) {
                    ask(s, now); // in order with the messages: everything before it has been seen
                }
            }
            case LinkControl.HELLO -> {
                In s = streams.get(c.stream);
                if (s.expected == 0 && s.owedFrom == 0) {
                    s.owedFrom = c.last + 1; // what the sender sends after it hears the answer is owed
                }
                publisher.publish(ackSubject, AckLine.present(receiver, node));
            }
            case LinkControl.LOST -> {
                In s = streams.get(c.stream);
                // Remembered while the sender says it again (it does, for the timeout): applied once.
                s.heardNanos = now;
                if (!s.broken) {
                    apply(s, c.verdict);
                }
            }
            default -> {
            }
        }
    }

    /** Tells the sending nodes this subscription exists, and what it has of each stream. */
    void heartbeat() {
        publisher.publish(ackSubject, AckLine.present(receiver, node));
        for (In s : streams.values()) {
            if (s.expected > 0 && !s.broken) {
                ack(s);
            }
        }
    }

    /**
     * Timers: acknowledges what was delivered since the last acknowledgement, and ends streams whose
     * sender has been silent for the timeout, with a verdict when something may be missing.
     */
    void tick(long now) {
        for (Iterator<In> it = streams.values().iterator(); it.hasNext(); ) {
            In s = it.next();
            if (!s.broken && s.expected > 0 && s.delivered() > s.ackedSent) {
                ack(s);
            }
            if (now - s.heardNanos > timeoutNanos) {
                // Owed something: it delivered some of the stream, or heard it begin (its node may
                // have died before a message got here, or with them in a server that hung).
                if (!s.broken && (s.expected > 0 || s.owedFrom > 0) && !s.ended) {
                    long after = s.expected > 0 ? s.delivered() : s.owedFrom - 1;
                    verdict(s, after, Math.max(0, s.tail - after), true,
                            s.origin + " silent for " + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos) + "s");
                }
                abandon(s);
                it.remove();
            }
        }
    }

    /** This node found a loss nobody can make good: closes its own members and tells every other node. */
    private void verdict(In s, long after, long count, boolean atLeast, String why) {
        Verdict v = new Verdict(s.id, after, count, atLeast, node + ": " + why);
        stats.recordLosslessLost(count);
        log.warn("Lossless stream {} broken: {}", key, v.reason());
        publisher.publish(subject, LinkControl.lost(v, s.tail, keyBytes));
        publisher.publish(ackSubject, AckLine.lost(v));
        apply(s, v);
    }

    private void apply(In s, Verdict v) {
        s.broken = true;
        abandon(s);
        stats.recordBroken();
        delivery.broken(key, false, v.reason());
    }

    /** Gives up the message being put together, if any. */
    private void abandon(In s) {
        if (s.parts != null) {
            for (ByteBuf b : s.parts) {
                b.release();
            }
            release(s);
        }
    }

    private void release(In s) {
        bufferedBytes.getAndAdd(-s.total);
        s.parts = null;
    }

    /** The subscription ended: tells the senders, and gives up partial messages. */
    void close() {
        publisher.publish(ackSubject, AckLine.bye(receiver, node));
        for (In s : streams.values()) {
            abandon(s);
        }
        streams.clear();
    }

    /** This subscription's receiver id, for tests. */
    long receiver() {
        return receiver;
    }
}
