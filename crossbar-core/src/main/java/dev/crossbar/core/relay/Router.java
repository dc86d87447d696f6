package dev.crossbar.core.relay;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.Route;
import dev.crossbar.core.stats.ConnectionStats;
import dev.crossbar.core.topic.LoopGroup;
import dev.crossbar.core.topic.Member;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Moves a message from its sender to the receivers of its topic.
 *
 * <p>Per message: the schema, and then the sender's access ({@link Member#maySend()}), decide
 * whether the sender may send; the frame is built once ({@link PreparedFrame}); each event loop with receivers gets one queued delivery
 * ({@link LoopQueue}); each receiver writes a {@code retainedDuplicate()} on its own loop. The
 * original reference is released exactly once, here, when the deliveries are queued.
 */
public final class Router {

    /** Default bound on fan-out work queued for one event loop, in frame bytes. */
    public static final long DEFAULT_MAX_LOOP_BACKLOG_BYTES = 64L * 1024 * 1024;

    private final TopicRegistry topics;
    private final long maxLoopBacklogBytes;
    private final ConcurrentHashMap<EventExecutor, LoopQueue> queues = new ConcurrentHashMap<>();

    public Router(TopicRegistry topics, long maxLoopBacklogBytes) {
        this.topics = requireNonNull(topics, "topics");
        if (maxLoopBacklogBytes <= 0) {
            throw new IllegalArgumentException(
                    "maxLoopBacklogBytes: " + maxLoopBacklogBytes + " (expected: > 0)");
        }
        this.maxLoopBacklogBytes = maxLoopBacklogBytes;
    }

    public Router(TopicRegistry topics) {
        this(topics, DEFAULT_MAX_LOOP_BACKLOG_BYTES);
    }

    public TopicRegistry topics() {
        return topics;
    }

    public Topic join(Member member) {
        return topics.join(member);
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
        ConnectionStats stats = sender.stats();
        // One clock read per message: receivers record this time too (PreparedFrame.publishedAtNanos).
        long now = System.nanoTime();
        stats.recordIn(payload.readableBytes(), now);
        Route route = sender.route();
        if (!route.canSend() || !sender.maySend()) {
            stats.recordRefused();
            payload.release();
            return;
        }
        LoopGroup[] groups = topic.groups();
        if (groups.length == 0) {
            payload.release();
            return;
        }
        PreparedFrame frame = PreparedFrame.of(alloc, text, payload, now);
        try {
            for (LoopGroup group : groups) {
                if (group.reachesOtherThan(sender)
                        && !queueFor(group.loop()).offer(frame, group.members(), sender)) {
                    for (Member m : group.members()) {
                        if (m != sender) {
                            m.stats().recordDroppedElsewhere();
                        }
                    }
                }
            }
        } finally {
            frame.release();
        }
    }

    /** Bytes of fan-out work queued across all loops, for metrics. */
    public long backlogBytes() {
        long sum = 0;
        for (LoopQueue q : queues.values()) {
            sum += q.backlogBytes();
        }
        return sum;
    }

    private LoopQueue queueFor(EventExecutor loop) {
        LoopQueue q = queues.get(loop);
        return q != null ? q : queues.computeIfAbsent(loop, l -> new LoopQueue(l, maxLoopBacklogBytes));
    }
}
