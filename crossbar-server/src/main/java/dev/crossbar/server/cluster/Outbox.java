package dev.crossbar.server.cluster;

import dev.crossbar.core.route.TopicKey;
import io.nats.client.Subscription;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What this node sends on one lossless topic: its stream (id and last sequence number), the
 * messages not yet acknowledged by every receiving node it knows, and those nodes, as their
 * {@link AckLine}s tell it.
 *
 * <p>A message is kept, as the NATS messages it was published as, until every known receiver has
 * acknowledged it; a receiver that asks for one again, or has acknowledged nothing new for a while
 * though it is still heard from, gets every message from there on again (go-back-N: receivers
 * deliver in order and drop what does not come next). A receiver is owed what is sent after this
 * node hears of it; one that first acknowledges a later message than that missed the first ones.
 * What cannot be sent again (given up, never kept, or refused) is a {@link Verdict}, made by the
 * {@link LosslessLink} that owns this outbox.
 *
 * <p>Engine thread only. Ownership: {@link #send} borrows the payload (the caller releases it).
 */
final class Outbox {

    /** First wait for an acknowledgement before sending again; doubled each time, up to {@link #MAX_RESEND_NANOS}. */
    static final long RESEND_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final long MAX_RESEND_NANOS = TimeUnit.SECONDS.toNanos(8);
    /** A receiver heard from within this is there; one silent for longer is waited for, not sent to again. */
    static final long SILENT_NANOS = TimeUnit.SECONDS.toNanos(3);
    /** A second request for what was just sent again is the first one's echo: ignored within this. */
    static final long RESEND_GUARD_NANOS = TimeUnit.MILLISECONDS.toNanos(300);
    /**
     * For this long after a stream starts, what it sends is kept though no receiving node is known:
     * a node whose subscriber was there first said so before this node listened for it, and says
     * it again when this node's hello reaches it, a round trip later, by which time the first
     * messages are on their way to it and may be lost with nothing kept to send again.
     */
    static final long PRESENCE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Heartbeats saying all is acknowledged sent after the last sender left, before the outbox goes. */
    static final int ENDING_TAILS = 3;

    /** A verdict's record, and how many more heartbeats (while the link is up) say it again. */
    private static final class Said {
        final byte[] record;
        long times;

        Said(byte[] record, long times) {
            this.record = record;
            this.times = times;
        }
    }

    /** One message as published: its NATS messages, kept to be published again. */
    private record Held(long seq, byte[][] chunks, long cost) {
    }

    /** A receiving node's subscription. */
    private static final class Peer {
        final String node;
        /** It has every message up to this one. */
        long acked;
        /** The first message it is owed (it was heard of just before); 0 when not known. */
        long owedFrom;
        boolean firstChecked;
        long heardNanos;
        /** When it last acknowledged something new, or was last sent its messages again. */
        long progressNanos;
        long resendNanos = RESEND_NANOS;

        Peer(String node) {
            this.node = node;
        }
    }

    final TopicKey key;
    final String subject;
    final String ackSubject;
    final byte[] keyBytes;
    long id;
    long seq;
    /** This node has senders on the topic; without, the outbox goes once all is acknowledged. */
    boolean senders = true;
    /** This node's subscription to the ack subject, or null. */
    Subscription acks;
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    private long heldCost;
    private final Map<Long, Peer> peers = new HashMap<>();
    private long resentFrom = Long.MAX_VALUE;
    private long resentAtNanos;
    private long lastTailNanos;
    /** Ending heartbeats still to say; -1 once said (the outbox stays only for {@link #verdicts}). */
    private int endingTails;
    /**
     * Verdicts on this topic's earlier streams, said again: the first time may have gone into a
     * link that was failing (a full buffer, a server that died), and a receiving node that never
     * hears it would leave its clients waiting with a hole, told nothing.
     */
    private final ArrayDeque<Said> verdicts = new ArrayDeque<>();
    private long lastVerdictNanos;
    /** A verdict the connection has not taken yet: the stream's messages wait behind it. */
    private boolean unsaid;
    /** Until then the stream's messages are kept even with no receiver known ({@link #PRESENCE_GRACE_NANOS}). */
    private long graceUntilNanos;

    Outbox(TopicKey key, long id, long now) {
        this.key = key;
        this.subject = Subjects.subject(key);
        this.ackSubject = Subjects.ackSubject(key);
        this.keyBytes = Subjects.isHashed(subject) ? key.toString().getBytes(StandardCharsets.UTF_8) : null;
        this.id = id;
        this.graceUntilNanos = now + PRESENCE_GRACE_NANOS;
    }

    /** Whether what is sent now is kept: for a receiver known, or one that may not have said so yet. */
    private boolean keeping(long now) {
        return !peers.isEmpty() || now - graceUntilNanos < 0;
    }

    /**
     * Numbers and publishes one message (if {@code connected}; otherwise it waits for the link to
     * come back), keeping it while any receiver is known.
     *
     * @param cost what the message counts against the link's bound while kept
     * @throws IllegalArgumentException if the server's {@code max_payload} leaves no room for a chunk
     */
    void send(LosslessLink link, boolean connected, boolean text, ByteBuf payload, long cost, long maxPayload, long now) {
        long s = ++seq;
        int length = payload.readableBytes();
        int header = Envelope.headerLength(keyBytes);
        long room = maxPayload - header;
        if (room <= 0) {
            throw new IllegalArgumentException("server max_payload " + maxPayload + " leaves no room after the "
                    + header + "-byte envelope");
        }
        int n = (int) Math.max(1, (length + room - 1) / room);
        byte[][] chunks = new byte[n][];
        int flags = Envelope.LOSSLESS | (text ? Envelope.TEXT : 0);
        int offset = 0;
        for (int part = 0; part < n; part++) {
            int size = (int) Math.min(room, length - offset);
            byte[] data = new byte[header + size];
            Envelope.writeHeader(data, flags | (part < n - 1 ? Envelope.MORE : 0), id, s, part, length, keyBytes);
            payload.getBytes(payload.readerIndex() + offset, data, header, size);
            chunks[part] = data;
            offset += size;
        }
        if (keeping(now)) {
            held.addLast(new Held(s, chunks, cost));
            heldCost += cost;
            link.held(cost);
            for (Peer p : peers.values()) {
                if (p.acked == s - 1) {
                    p.progressNanos = now; // its wait for this message starts now
                }
            }
        }
        if (connected && !unsaid || peers.isEmpty()) {
            // Unconnected with nobody to keep it for: the client's reconnect buffer, as for any stream.
            for (byte[] chunk : chunks) {
                link.publish(subject, chunk);
            }
        }
    }

    /** A receiver is present: known from now on, owed what is sent after now. */
    void present(long receiver, String node, long now) {
        Peer p = peers.get(receiver);
        if (p == null) {
            p = new Peer(node);
            // Owed what comes next; but what the grace kept stays kept until it says it has it.
            Held first = held.peekFirst();
            p.acked = first != null && now - graceUntilNanos < 0 ? first.seq - 1 : seq;
            p.owedFrom = seq + 1;
            p.progressNanos = now;
            peers.put(receiver, p);
        }
        heard(p, now);
    }

    /** A receiver has every message from {@code first} to {@code last}. */
    void ack(LosslessLink link, long receiver, String node, long stream, long first, long last, long now) {
        Peer p = peers.get(receiver);
        if (stream != id) {
            if (p != null) {
                heard(p, now); // about a stream of ours that ended: still there
            }
            return;
        }
        if (p == null) {
            // Forgotten while it was away, or its presence not heard: known again, from what it has.
            // What came after may still be on its way to it; if not, it asks, and is answered then.
            p = new Peer(node);
            p.acked = Math.min(last, seq);
            peers.put(receiver, p);
        }
        heard(p, now);
        if (!p.firstChecked && p.owedFrom > 0) {
            p.firstChecked = true;
            if (first > p.owedFrom) {
                link.verdict(this, p.owedFrom - 1, first - p.owedFrom, false, node + " missed them");
                return;
            }
        }
        if (last > p.acked) {
            p.acked = Math.min(last, seq);
            p.progressNanos = now;
            p.resendNanos = RESEND_NANOS;
            trim(link, now);
        }
    }

    /** A receiver misses message {@code from} and what follows: send them again, or say they are gone. */
    void missing(LosslessLink link, boolean connected, long receiver, String node, long stream, long from, long now) {
        if (stream != id || from > seq || from < 1) {
            return;
        }
        Peer p = peers.get(receiver);
        if (p == null) {
            p = new Peer(node);
            p.acked = from - 1;
            peers.put(receiver, p);
        }
        heard(p, now);
        if (from - 1 > p.acked) {
            p.acked = from - 1;
            trim(link, now);
        }
        p.progressNanos = now;
        resend(link, connected, from, now, node, false);
    }

    /** A receiver's subscription ended: what it had not acknowledged is no longer kept for it. */
    void bye(LosslessLink link, long receiver, long now) {
        if (peers.remove(receiver) != null) {
            trim(link, now);
        }
    }

    /**
     * Publishes again every kept message from {@code from} on; if {@code from} is no longer kept,
     * that is a verdict. Not again within {@link #RESEND_GUARD_NANOS} of a resend that covered it,
     * unless {@code force} (the link came back: what was sent before may be gone).
     */
    private void resend(LosslessLink link, boolean connected, long from, long now, String forNode, boolean force) {
        if (!available(from)) {
            link.verdict(this, from - 1, missingCount(from), false,
                    forNode + " missed them; " + link.nodeName() + " no longer has them");
            return;
        }
        if (!force && resentFrom <= from && now - resentAtNanos < RESEND_GUARD_NANOS) {
            return;
        }
        resentFrom = from;
        resentAtNanos = now;
        if (!connected || unsaid) {
            return; // all of it goes again when the link is back, or behind the verdict once said
        }
        long messages = 0;
        for (Held h : held) {
            if (h.seq >= from) {
                for (byte[] chunk : h.chunks) {
                    link.publish(subject, chunk);
                }
                messages++;
            }
        }
        link.resent(messages);
    }

    /** Whether message {@code seq} can still be sent (kept, or not yet sent). */
    private boolean available(long s) {
        if (s > seq) {
            return true;
        }
        Held first = held.peekFirst();
        return first != null && first.seq <= s;
    }

    /** How many messages from {@code from} on are not kept. */
    private long missingCount(long from) {
        Held first = held.peekFirst();
        return (first == null ? seq + 1 : first.seq) - from;
    }

    private static void heard(Peer p, long now) {
        if (now - p.heardNanos > SILENT_NANOS) {
            // Back after a silence (its link, or ours): what it lacks goes again at the next tick.
            p.progressNanos = 0;
            p.resendNanos = RESEND_NANOS;
        }
        p.heardNanos = now;
    }

    /** Drops kept messages every known receiver has (all of them when none is known). */
    private void trim(LosslessLink link, long now) {
        if (peers.isEmpty() && now - graceUntilNanos < 0) {
            return; // kept for a receiver that may not have said so yet
        }
        long min = seq;
        for (Peer p : peers.values()) {
            min = Math.min(min, p.acked);
        }
        long freed = 0;
        while (!held.isEmpty() && held.peekFirst().seq <= min) {
            freed += held.pollFirst().cost;
        }
        heldCost -= freed;
        link.held(-freed);
    }

    /**
     * Timers, while the link is up ({@code upSince}: since when): forgets receivers silent for
     * {@code timeoutNanos}, sends again what a receiver still heard from has not acknowledged
     * within its wait, and says the stream's tail every {@code heartbeatNanos}.
     *
     * @return false when the outbox is done: no senders, nothing kept, its last heartbeats sent and
     *         its verdicts said
     */
    boolean tick(LosslessLink link, long now, long upSince, long timeoutNanos, long heartbeatNanos) {
        boolean forgot = false;
        for (Iterator<Map.Entry<Long, Peer>> it = peers.entrySet().iterator(); it.hasNext(); ) {
            Peer p = it.next().getValue();
            if (now - Math.max(p.heardNanos, upSince) > timeoutNanos) {
                it.remove();
                forgot = true;
                link.forgot(this, p.node, seq - p.acked);
            }
        }
        if (forgot || peers.isEmpty() && !held.isEmpty() && !keeping(now)) {
            trim(link, now); // also what the grace kept, once it is over with no receiver heard of
        }
        long from = Long.MAX_VALUE;
        String forNode = null;
        for (Peer p : peers.values()) {
            if (p.acked < seq && now - p.progressNanos > p.resendNanos && now - p.heardNanos < SILENT_NANOS) {
                if (p.acked + 1 < from) {
                    from = p.acked + 1;
                    forNode = p.node;
                }
                p.progressNanos = now;
                p.resendNanos = Math.min(2 * p.resendNanos, MAX_RESEND_NANOS);
            }
        }
        if (forNode != null) {
            resend(link, true, from, now, forNode, false);
        }
        boolean done = !senders && held.isEmpty();
        if (!done) {
            endingTails = 0;
        } else if (endingTails == 0) {
            endingTails = ENDING_TAILS;
            lastTailNanos = 0; // say it at once
        }
        sayVerdictsAgain(link, now, heartbeatNanos);
        if (endingTails >= 0 && !unsaid && (!peers.isEmpty() || done) && now - lastTailNanos >= heartbeatNanos) {
            lastTailNanos = now;
            link.publish(subject, LinkControl.tail(id, seq, done, link.nodeName(), keyBytes));
            if (done && --endingTails == 0) {
                endingTails = -1;
            }
        }
        return endingTails != -1 || !verdicts.isEmpty();
    }

    /**
     * Says {@code record} (a verdict's) again at the next tick while the link is up, then at each
     * heartbeat, {@code times} times in all. If the connection did not take it the first time
     * ({@code said} false: its buffer was full, or it was between servers), what the new stream
     * sends meanwhile is kept, not published, until it has been said: receiving nodes hear of the
     * loss before anything sent after it.
     */
    void repeat(byte[] record, long times, boolean said) {
        verdicts.addLast(new Said(record, times));
        unsaid |= !said;
    }

    private void sayVerdictsAgain(LosslessLink link, long now, long heartbeatNanos) {
        if (verdicts.isEmpty() || !unsaid && now - lastVerdictNanos < heartbeatNanos) {
            return;
        }
        lastVerdictNanos = now;
        boolean said = true;
        for (Said v : verdicts) {
            said &= link.publish(subject, v.record);
            v.times--;
        }
        verdicts.removeIf(v -> v.times <= 0);
        if (unsaid && said) {
            unsaid = false;
            Held first = held.peekFirst();
            if (first != null) {
                resend(link, true, first.seq, now, "every receiver", true);
            }
        }
    }

    /** The link is back: everything kept goes again, from the first. */
    void linkBack(LosslessLink link, long now) {
        if (unsaid) {
            sayVerdictsAgain(link, now, 0); // first; what is kept follows once it is taken
        }
        Held first = held.peekFirst();
        if (first != null) {
            resend(link, true, first.seq, now, "a receiver", true);
        }
        link.publish(subject, LinkControl.hello(id, seq, keyBytes));
    }

    /** The node is going away: tells the receivers the stream ended with its last message. */
    void farewell(LosslessLink link) {
        link.publish(subject, LinkControl.tail(id, seq, true, link.nodeName(), keyBytes));
    }

    /** The first message kept, or 0 when none is. */
    long firstHeld() {
        Held first = held.peekFirst();
        return first == null ? 0 : first.seq;
    }

    /** Messages kept now. */
    int heldCount() {
        return held.size();
    }

    /**
     * After a verdict the stream starts again as a new one (its clients are being closed): a new
     * id, numbered from 1, nothing kept; known receivers stay known, owed the new stream from its
     * first message.
     */
    void restart(LosslessLink link, long newId, long now) {
        link.held(-heldCost);
        heldCost = 0;
        held.clear();
        id = newId;
        seq = 0;
        graceUntilNanos = now + PRESENCE_GRACE_NANOS;
        resentFrom = Long.MAX_VALUE;
        for (Peer p : peers.values()) {
            p.acked = 0;
            p.owedFrom = 1;
            p.firstChecked = false;
        }
    }

    /** Gives up everything kept (the broker is closing). */
    void discard(LosslessLink link) {
        link.held(-heldCost);
        heldCost = 0;
        held.clear();
    }
}
