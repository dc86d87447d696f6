package dev.crossbar.core.relay;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Sends one message to receivers grouped by event loop: the frame is built once
 * ({@link PreparedFrame}); receivers on the sender's own loop are written there, with no hand-off
 * (a few at once, more at the end of the loop's batch, as a run), and flushed together; each other
 * loop gets one queued delivery ({@link LoopQueue}) and is woken once per batch of the sender's
 * loop. Each receiver writes a {@code retainedDuplicate()} on its own loop.
 *
 * <p>Ownership: {@link #send} takes the caller's reference to the payload and releases it exactly
 * once, when the deliveries are written or queued.
 */
public final class FanOut {

    /** Default bound on fan-out work queued for one event loop, in frame bytes. */
    public static final long DEFAULT_MAX_LOOP_BACKLOG_BYTES = 64L * 1024 * 1024;

    private final long maxLoopBacklogBytes;
    private final ConcurrentHashMap<EventExecutor, LoopQueue> queues = new ConcurrentHashMap<>();

    public FanOut(long maxLoopBacklogBytes) {
        if (maxLoopBacklogBytes <= 0) {
            throw new IllegalArgumentException(
                    "maxLoopBacklogBytes: " + maxLoopBacklogBytes + " (expected: > 0)");
        }
        this.maxLoopBacklogBytes = maxLoopBacklogBytes;
    }

    /**
     * Sends {@code payload} to {@code groups}, all but {@code sender} (null: none to skip, as for a
     * message from another node). {@code now} is when the relay received it.
     */
    public void send(LoopGroup[] groups, Member sender, boolean text, ByteBuf payload, ByteBufAllocator alloc,
                     long now) {
        send(groups, sender, text, payload, alloc, now, -1);
    }

    /**
     * As above, for a stream whose receivers may start part-way into a message: {@code randomAccess}
     * is where in the payload a receiver skipped forward starts (a keyframe), or -1.
     */
    public void send(LoopGroup[] groups, Member sender, boolean text, ByteBuf payload, ByteBufAllocator alloc,
                     long now, int randomAccess) {
        if (groups.length == 0) {
            payload.release();
            return;
        }
        PreparedFrame frame = PreparedFrame.of(alloc, text, payload, now).randomAccessAt(randomAccess);
        // The sender's loop, which batches this read's hand-offs; none for messages from other nodes.
        LoopQueue origin = sender != null && sender.executor().inEventLoop() ? queueFor(sender.executor()) : null;
        try {
            for (LoopGroup group : groups) {
                if (sender != null && !group.reachesOtherThan(sender)) {
                    continue;
                }
                LoopQueue queue = queueFor(group.loop());
                boolean queued = true;
                if (queue == origin) {
                    // The receivers live on this thread: written here, no hand-off, no wake-up.
                    queued = queue.deliverHere(frame, group.members(), sender);
                } else if (origin != null) {
                    queued = queue.offerFrom(origin, frame, group.members(), sender);
                } else {
                    queued = queue.offer(frame, group.members(), sender);
                }
                if (!queued) {
                    for (Member m : group.members()) {
                        if (m != sender) {
                            m.stats().recordDroppedElsewhere();
                        }
                    }
                }
            }
        } finally {
            // Receivers here have copied a small frame by now: unless another loop's queue holds it,
            // its buffer is free for this loop's next one.
            frame.releaseOrKeep();
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

    /**
     * Whether some event loop has more than half its bound of fan-out work queued: past the bound
     * its receivers lose messages, so a sender that can be slowed down (an HTTP body) waits.
     */
    public boolean backlogged() {
        long half = maxLoopBacklogBytes / 2;
        for (LoopQueue q : queues.values()) {
            if (q.backlogBytes() > half) {
                return true;
            }
        }
        return false;
    }

    private LoopQueue queueFor(EventExecutor loop) {
        LoopQueue q = queues.get(loop);
        return q != null ? q : queues.computeIfAbsent(loop, this::newQueue);
    }

    private LoopQueue newQueue(EventExecutor loop) {
        return new LoopQueue(loop, maxLoopBacklogBytes);
    }
}
