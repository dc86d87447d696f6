package dev.crossbar.core.topic;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.broker.Broker;
import dev.crossbar.core.broker.RemoteDelivery;
import dev.crossbar.core.relay.FanOut;
import dev.crossbar.core.relay.LoopGroup;
import dev.crossbar.core.relay.Member;
import dev.crossbar.core.relay.PreparedFrame;
import dev.crossbar.core.relay.RelayBuffers;
import dev.crossbar.core.replay.Replayed;
import dev.crossbar.core.replay.StreamMemory;
import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.stats.ConnectionStats;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Moves a message from its sender to the receivers of its topic.
 *
 * <p>Per message: the schema, and then the sender's access ({@link Member#maySend()}), decide
 * whether the sender may send; the frame is built once ({@link PreparedFrame}); receivers on the
 * sender's own event loop are written at once (and flushed together after the read batch); each
 * other event loop with receivers gets one queued delivery (the fan-out's loop outbox), and is woken once
 * per batch of the sender's loop, not once per message. Each receiver
 * writes a {@code retainedDuplicate()} on its own loop. The original reference is released exactly
 * once, here, when the deliveries are written or queued.
 *
 * <p>With a cluster {@link Broker} (the registry's), each message a member may send also goes to the
 * broker once, after the local fan-out; messages from other nodes come in through
 * {@link #deliver(TopicKey, boolean, ByteBuf)} and take the same per-loop path to every local
 * receiver.
 */
public final class Router implements RemoteDelivery {

    /** Default bound on fan-out work queued for one event loop, in frame bytes. */
    public static final long DEFAULT_MAX_LOOP_BACKLOG_BYTES = FanOut.DEFAULT_MAX_LOOP_BACKLOG_BYTES;

    private static final LoopGroup[] NO_GROUPS = new LoopGroup[0];

    private final TopicRegistry topics;
    private final Broker broker;
    private final FanOut fanOut;
    /** Lossless topics whose senders are held while the link to other nodes is behind. */
    private final Set<Topic> heldForLink = ConcurrentHashMap.newKeySet();

    public Router(TopicRegistry topics, long maxLoopBacklogBytes) {
        this.topics = requireNonNull(topics, "topics");
        this.broker = topics.broker();
        this.fanOut = new FanOut(maxLoopBacklogBytes);
    }

    public Router(TopicRegistry topics) {
        this(topics, DEFAULT_MAX_LOOP_BACKLOG_BYTES);
    }

    public TopicRegistry topics() {
        return topics;
    }

    /**
     * Adds the member to its topic and, for a topic that remembers, writes its replay to it first.
     * Called on the member's event loop, so the replay is written before any live message, which
     * reaches the member on that loop later (or, from a sender on the same loop, not before this
     * returns).
     */
    public Topic join(Member member) {
        TopicRegistry.Joined joined = topics.join(member);
        if (!joined.replay().isEmpty()) {
            replay(member, joined.replay());
        }
        return joined.topic();
    }

    private static void replay(Member member, Iterable<Replayed> replay) {
        long now = System.nanoTime();
        boolean flush = false;
        for (Replayed r : replay) {
            // Each payload's reference goes to its frame, released once written.
            PreparedFrame frame = PreparedFrame.of(RelayBuffers.ALLOCATOR, r.text(), r.payload(), now);
            try {
                flush |= member.deliverReplay(frame);
            } finally {
                frame.release();
            }
        }
        if (flush) {
            member.flush();
        }
    }

    public void leave(Member member) {
        topics.leave(member);
    }

    /**
     * Relays one whole message from {@code sender}, a member of {@code topic}. Called on the
     * sender's event loop.
     *
     * <p>Ownership: takes the caller's reference to {@code payload} and releases it (directly, or
     * through the frame once every loop has written it).
     */
    public void publish(Member sender, Topic topic, boolean text, ByteBuf payload, ByteBufAllocator alloc) {
        publish(sender, topic, text, payload, alloc, System.nanoTime());
    }

    /**
     * As above, received at {@code receivedAtNanos} ({@link System#nanoTime()}): the time the
     * sender's socket read that held the message, which every message of one read may share, one
     * clock read for all of them. Receivers record this time too ({@link PreparedFrame#publishedAtNanos}).
     */
    public void publish(Member sender, Topic topic, boolean text, ByteBuf payload, ByteBufAllocator alloc,
                        long receivedAtNanos) {
        ConnectionStats stats = sender.stats();
        stats.recordIn(payload.readableBytes(), receivedAtNanos);
        Route route = sender.route();
        if (!route.canSend() || !sender.maySend()) {
            stats.recordRefused();
            payload.release();
            return;
        }
        // The broker's reference, taken before the frame takes ours; none at all on a lone node.
        ByteBuf remote = broker == Broker.LOCAL ? null : payload.retainedDuplicate();
        try {
            if (topic.remembers()) {
                int randomAccess;
                LoopGroup[] groups;
                synchronized (topic) {
                    randomAccess = topic.record(sender, text, payload);
                    groups = topic.groups();
                }
                fanOut.send(groups, sender, text, payload, alloc, receivedAtNanos, randomAccess);
            } else {
                fanOut.send(topic.groups(), sender, text, payload, alloc, receivedAtNanos);
            }
        } finally {
            if (remote != null) {
                HoldBack hold = topic.holdBack();
                broker.publish(route.topic(), text, remote, hold != null);
                if (hold != null && broker.congested()) {
                    holdForLink(topic, hold);
                }
            }
        }
    }

    /**
     * Holds a lossless topic's senders while the link to other nodes is behind (see
     * {@link #linkRelieved}). Held again on every message published while it is behind (a no-op
     * when already held), so a relief that raced with this one cannot leave the topic unheld.
     */
    private void holdForLink(Topic topic, HoldBack hold) {
        heldForLink.add(topic);
        hold.holdForLink();
    }

    @Override
    public void linkRelieved() {
        if (heldForLink.isEmpty()) {
            return;
        }
        for (Iterator<Topic> it = heldForLink.iterator(); it.hasNext(); ) {
            Topic topic = it.next();
            it.remove();
            topic.holdBack().releaseForLink();
        }
    }

    /**
     * Relays a message that came from another node to every local receiver of {@code key}. Any
     * thread. Ownership: takes the caller's reference to {@code payload}.
     */
    @Override
    public int deliver(TopicKey key, boolean text, ByteBuf payload) {
        Topic topic = topics.get(key);
        int randomAccess = -1;
        LoopGroup[] groups;
        if (topic == null) {
            groups = NO_GROUPS;
        } else if (topic.remembers()) {
            synchronized (topic) {
                randomAccess = topic.record(StreamMemory.REMOTE, text, payload);
                groups = topic.groups();
            }
        } else {
            groups = topic.groups();
        }
        int receivers = 0;
        for (LoopGroup group : groups) {
            receivers += group.members().length;
        }
        if (receivers == 0) {
            payload.release();
            return 0;
        }
        ByteBuf shared = payload;
        if (!payload.isDirect()) {
            // A socket write copies a heap buffer into a fresh direct one, once per receiver; copy
            // once here instead, so every receiver shares the same direct bytes.
            try {
                shared = RelayBuffers.ALLOCATOR.directBuffer(payload.readableBytes());
                shared.writeBytes(payload, payload.readerIndex(), payload.readableBytes());
            } finally {
                payload.release();
            }
        }
        fanOut.send(groups, null, text, shared, RelayBuffers.ALLOCATOR, System.nanoTime(), randomAccess);
        return receivers;
    }

    @Override
    public void holdBack(TopicKey key, String node, boolean held) {
        Topic topic = topics.get(key);
        HoldBack hold = topic == null ? null : topic.holdBack();
        if (hold == null) {
            return; // no such stream here, or not a lossless one: nothing to hold
        }
        if (held) {
            hold.holdFor(node);
        } else {
            hold.releaseFor(node);
        }
    }

    @Override
    public void expireHolds(long maxAgeNanos) {
        for (Topic topic : topics.topics()) {
            HoldBack hold = topic.holdBack();
            if (hold != null) {
                hold.expireRemote(maxAgeNanos);
            }
        }
    }

    /**
     * Closes the local members of a lossless stream that lost messages (see
     * {@link RemoteDelivery#broken}): each on its own event loop.
     */
    @Override
    public void broken(TopicKey key, boolean senders, String reason) {
        Topic topic = topics.get(key);
        if (topic == null) {
            return;
        }
        for (Member m : topic.members()) {
            if (m.route().canReceive() || (senders && m.route().canSend())) {
                m.executor().execute(() -> m.streamBroken(reason));
            }
        }
    }

    /**
     * The fan-out every message of this router takes, for the relay's liveness probe: a probe sent
     * through it uses the same per-loop queues as real messages, so it proves they move.
     */
    public FanOut fanOut() {
        return fanOut;
    }

    /** Whether some event loop is more than half-way to its fan-out bound ({@link FanOut#backlogged}). */
    public boolean backlogged() {
        return fanOut.backlogged();
    }

    /** Bytes of fan-out work queued across all loops, for metrics. */
    public long backlogBytes() {
        return fanOut.backlogBytes();
    }
}
