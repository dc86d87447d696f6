package dev.crossbar.server.cluster;

import dev.crossbar.core.broker.RemoteDelivery;
import dev.crossbar.core.route.TopicKey;
import io.nats.client.Dispatcher;
import io.netty.buffer.ByteBuf;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lossless ({@code slow=backpressure}) streams on this node's link: at least once between nodes,
 * with duplicates removed and order kept, and a {@link Verdict} wherever a loss cannot be made good.
 * Ordinary streams never come here.
 *
 * <p>As a sender, one {@link Outbox} per lossless topic this node has senders on: messages are
 * numbered and kept until every receiving node has acknowledged them, sent again when asked or
 * when a receiver still heard from has acknowledged nothing new for a while, and all of them after
 * the link comes back. What is kept counts against {@code --nats-max-pending} and holds the
 * senders back like the rest of the link ({@link #heldBytes}). As a receiver, each lossless
 * subscription has an {@link Inbox}, ticked and made to say it is there from here.
 *
 * <p>A verdict closes, on every node, every member that receives the topic, and on the node whose
 * stream lost the messages, those that send on it too: there with
 * {@link RemoteDelivery#broken}, elsewhere through a {@link LinkControl#LOST} record on the topic's
 * subject (to receiving nodes; a sender's verdict is said again at each heartbeat, while the link is
 * up, for as long as the timeout, so a record lost with a failing link still reaches them) or an
 * {@link AckLine#LOST} line on its ack subject (to the sending node). The loss is given up on, with
 * a verdict, when the sending node's link is down past {@code --nats-lossless-timeout} (what it
 * kept is dropped), when a message does not fit the bound, when a receiver asks for a message no
 * longer kept (it was away past the timeout), when a receiver missed the first messages it was
 * owed, and, on a receiving node, when a sender went silent past the timeout while it had messages
 * unacknowledged (its node died, or the link stayed down).
 *
 * <p>Engine thread only, except {@link #heldBytes()} (any thread) and the ack subject's handlers
 * (the NATS dispatcher thread), which parse and queue the work for the engine.
 */
final class LosslessLink {

    private static final Logger log = LoggerFactory.getLogger(LosslessLink.class);

    /** How often senders say their stream's tail and receivers say they are there. */
    static final long HEARTBEAT_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How often timers run at most (acknowledgements waiting, resends, timeouts). */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final String nodeName;
    private final NatsStats stats;
    private final WarnOnce warnings;
    private final long timeoutNanos;
    private final Consumer<Runnable> engine;
    private final Inbox.Publisher publisher;
    private final SecureRandom random;
    private final OwnStreams own;
    private final AtomicLong heldBytes = new AtomicLong();
    private final Map<TopicKey, Outbox> outboxes = new HashMap<>();
    private final Set<TopicSubscription> inboxes = new LinkedHashSet<>();
    private RemoteDelivery delivery;
    private Dispatcher dispatcher;
    private long lastTick;
    private long lastHeartbeat;

    /**
     * @param engine    queues work for the engine thread (acknowledgements arrive on the dispatcher's)
     * @param publisher publishes on the node's connection, never throwing
     */
    LosslessLink(String nodeName, NatsStats stats, WarnOnce warnings, long timeoutNanos, Consumer<Runnable> engine,
                 Inbox.Publisher publisher, SecureRandom random, OwnStreams own) {
        this.own = own;
        this.nodeName = nodeName;
        this.stats = stats;
        this.warnings = warnings;
        this.timeoutNanos = timeoutNanos;
        this.engine = engine;
        this.publisher = publisher;
        this.random = random;
    }

    /** Once connected: where acknowledgements are subscribed and verdicts delivered. */
    void attach(Dispatcher dispatcher, RemoteDelivery delivery) {
        this.dispatcher = dispatcher;
        this.delivery = delivery;
    }

    // ---- sending ----

    /** This node has senders on the lossless {@code key} ({@code on}), or no longer has. */
    void listen(TopicKey key, boolean on, long now) {
        if (on) {
            outbox(key, now).senders = true;
        } else {
            Outbox o = outboxes.get(key);
            if (o != null) {
                o.senders = false; // it goes once everything is acknowledged
            }
        }
    }

    private Outbox outbox(TopicKey key, long now) {
        Outbox o = outboxes.get(key);
        if (o == null) {
            o = new Outbox(key, newStreamId(), now);
            outboxes.put(key, o);
            if (dispatcher != null) {
                o.acks = dispatcher.subscribe(o.ackSubject, m -> {
                    AckLine line;
                    try {
                        line = AckLine.parse(m.getData());
                    } catch (IllegalArgumentException e) {
                        stats.recordRejected();
                        warnings.warn("ack", "dropping a line on {} that is not a Crossbar acknowledgement: {}",
                                m.getSubject(), e.getMessage());
                        return;
                    }
                    engine.accept(() -> line(key, line, System.nanoTime()));
                });
                // Receiving nodes answer at once, rather than at their next heartbeat.
                publish(o.subject, LinkControl.hello(o.id, o.seq, o.keyBytes));
            }
        }
        return o;
    }

    /**
     * Numbers, publishes and keeps one message of a lossless stream. Borrows {@code payload}.
     *
     * @param cost what it counts against the link's bound while kept
     */
    void send(boolean connected, long maxPayload, TopicKey key, boolean text, ByteBuf payload, long cost, long now) {
        Outbox o = outbox(key, now);
        try {
            o.send(this, connected, text, payload, cost, maxPayload, now);
            stats.recordSent(payload.readableBytes());
        } catch (IllegalArgumentException | IllegalStateException e) {
            verdict(o, o.seq - 1, 1, false, nodeName + ": NATS refused it (" + e.getMessage() + ")");
        }
    }

    /** A message of lossless {@code key} did not fit the link's bound: it is lost, and said so. */
    void overflow(TopicKey key) {
        Outbox o = outbox(key, System.nanoTime());
        o.seq++;
        verdict(o, o.seq - 1, 1, false, nodeName + ": over --nats-max-pending for other nodes");
    }

    /** One line from a receiving node on {@code key}'s ack subject. */
    void line(TopicKey key, AckLine l, long now) {
        Outbox o = outboxes.get(key);
        if (o == null) {
            return;
        }
        boolean connected = true; // lines arrive only over a live link
        switch (l.kind()) {
            case AckLine.PRESENT -> o.present(l.receiver(), l.node(), now);
            case AckLine.ACK -> o.ack(this, l.receiver(), l.node(), l.stream(), l.first(), l.last(), now);
            case AckLine.MISSING -> o.missing(this, connected, l.receiver(), l.node(), l.stream(), l.first(), now);
            case AckLine.BYE -> o.bye(this, l.receiver(), now);
            case AckLine.LOST -> {
                if (l.stream() == o.id) {
                    // A receiving node's verdict on our stream: our side closes and starts anew.
                    applyHere(o, l.verdict());
                }
            }
            default -> {
            }
        }
    }

    /**
     * This node, the sender, cannot deliver messages {@code after + 1} to {@code after + count} of
     * {@code o}'s stream: tells the receiving nodes, closes this node's members of the topic and
     * starts the stream anew.
     */
    void verdict(Outbox o, long after, long count, boolean atLeast, String why) {
        Verdict v = new Verdict(o.id, after, count, atLeast, why);
        stats.recordLosslessLost(count);
        byte[] record = LinkControl.lost(v, o.seq, o.keyBytes);
        boolean said = publish(o.subject, record);
        applyHere(o, v);
        // Said again at each heartbeat of the link's next timeout's worth: a receiving node applies it
        // once. Until it has been said once, the new stream waits behind it (see Outbox#repeat).
        o.repeat(record, timeoutNanos / HEARTBEAT_NANOS, said);
    }

    private void applyHere(Outbox o, Verdict v) {
        log.warn("Lossless stream {} broken: {}", o.key, v.reason());
        stats.recordBroken();
        if (delivery != null) {
            delivery.broken(o.key, true, v.reason());
        }
        o.restart(this, newStreamId(), System.nanoTime());
    }

    private long newStreamId() {
        long id = random.nextLong();
        own.add(id);
        return id;
    }

    // ---- receiving ----

    /** A subscription to a lossless topic began ({@code on}; it says so at once) or ended. */
    void received(TopicSubscription s, boolean on) {
        if (on) {
            inboxes.add(s);
            s.heartbeat();
        } else {
            inboxes.remove(s);
        }
    }

    // ---- timers and link changes ----

    /** Whether any lossless stream passes here: otherwise {@link #tick} has nothing to do. */
    boolean active() {
        return !outboxes.isEmpty() || !inboxes.isEmpty();
    }

    /**
     * Every pass of the engine (at most every {@link #TICK_NANOS}): heartbeats, acknowledgements,
     * resends, and the timeouts.
     *
     * @param upSince   when the link last came up (while {@code connected})
     * @param downSince when the link went down (while not {@code connected})
     */
    void tick(boolean connected, long upSince, long downSince, long now) {
        if (now - lastTick < TICK_NANOS) {
            return;
        }
        lastTick = now;
        boolean heartbeat = now - lastHeartbeat >= HEARTBEAT_NANOS;
        if (heartbeat) {
            lastHeartbeat = now;
        }
        for (Iterator<Outbox> it = outboxes.values().iterator(); it.hasNext(); ) {
            Outbox o = it.next();
            if (connected) {
                if (!o.tick(this, now, upSince, timeoutNanos, HEARTBEAT_NANOS)) {
                    it.remove();
                    unsubscribe(o);
                }
            } else if (now - downSince > timeoutNanos && o.heldCount() > 0) {
                long first = o.firstHeld();
                verdict(o, first - 1, o.seq - first + 1, false, nodeName + ": NATS link down for more than "
                        + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos) + "s");
            }
        }
        for (TopicSubscription s : inboxes) {
            if (heartbeat && connected) {
                s.heartbeat();
            }
            s.tick(now);
        }
    }

    /** The link came back (to the same server or another): everything kept goes again, and receivers say they are there. */
    void linkBack(long now) {
        for (Outbox o : outboxes.values()) {
            o.linkBack(this, now);
        }
        for (TopicSubscription s : inboxes) {
            s.heartbeat();
        }
    }

    private void unsubscribe(Outbox o) {
        if (o.acks != null && dispatcher != null) {
            try {
                dispatcher.unsubscribe(o.acks);
            } catch (IllegalStateException e) {
                log.debug("ack subscription of {} already gone: {}", o.key, e.toString());
            }
        }
    }

    /**
     * The node is closing (its clients have been closed): each stream says it ended, so receiving
     * nodes that have every message let it go quietly, and those that miss some say so at once.
     */
    void farewell() {
        for (Outbox o : outboxes.values()) {
            o.farewell(this);
        }
    }

    /** Gives up what is kept (the broker is closing). */
    void close() {
        for (Outbox o : outboxes.values()) {
            o.discard(this);
        }
        outboxes.clear();
        inboxes.clear();
    }

    // ---- for the outboxes ----

    /** Publishes on the node's connection; false if the connection did not take it. */
    boolean publish(String subject, byte[] data) {
        return publisher.publish(subject, data);
    }

    void held(long delta) {
        heldBytes.addAndGet(delta);
    }

    void resent(long messages) {
        stats.recordResent(messages);
    }

    void forgot(Outbox o, String node, long unacknowledged) {
        log.info("Lossless stream {}: forgetting {} (not heard from for {}s, {} messages unacknowledged); "
                        + "if it comes back it finds out what it missed", o.key, node,
                TimeUnit.NANOSECONDS.toSeconds(timeoutNanos), unacknowledged);
    }

    String nodeName() {
        return nodeName;
    }

    /** Bytes of messages kept for receiving nodes that have not acknowledged them. Any thread. */
    long heldBytes() {
        return heldBytes.get();
    }
}
