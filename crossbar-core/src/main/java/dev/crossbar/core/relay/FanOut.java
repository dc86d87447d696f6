package dev.crossbar.core.relay;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Sends one message to a topic's receivers, grouped by event loop ({@link LoopGroup}): the frame is
 * built once ({@link PreparedFrame}); receivers on the sender's own loop are written at once, in
 * the thread that read the message; every other loop gets one queued delivery, and is woken once
 * per batch of the sender's loop ({@link LoopOutbox}). Each receiver writes a
 * {@code retainedDuplicate()} of the frame on its own loop.
 *
 * <p>Ownership: {@link #send} takes the caller's reference to the payload and releases it exactly
 * once, when the deliveries are written or queued.
 */
public final class FanOut {

    /** Default bound on fan-out work queued for one event loop, in frame bytes. */
    public static final long DEFAULT_MAX_LOOP_BACKLOG_BYTES = 64L * 1024 * 1024;

    private final long maxLoopBacklogBytes;
    private final ConcurrentHashMap<EventExecutor, LoopOutbox> outboxes = new ConcurrentHashMap<>();

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
        // The sender's loop batches this read's hand-offs; a message from another node has none.
        LoopOutbox origin = sender != null && sender.executor().inEventLoop() ? outbox(sender.executor()) : null;
        try {
            for (LoopGroup group : groups) {
                if (sender != null && !group.reachesOtherThan(sender)) {
                    continue;
                }
                LoopOutbox box = outbox(group.loop());
                if (box == origin) {
                    box.writeHere(frame, group.members(), sender);
                } else if (!box.post(frame, group.members(), sender, origin)) {
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
        for (LoopOutbox o : outboxes.values()) {
            sum += o.backlogBytes();
        }
        return sum;
    }

    /**
     * Whether some event loop has more than half its bound of fan-out work queued: past the bound
     * its receivers lose messages, so a sender that can be slowed down (an HTTP body) waits.
     */
    public boolean backlogged() {
        long half = maxLoopBacklogBytes / 2;
        for (LoopOutbox o : outboxes.values()) {
            if (o.backlogBytes() > half) {
                return true;
            }
        }
        return false;
    }

    private LoopOutbox outbox(EventExecutor loop) {
        LoopOutbox o = outboxes.get(loop);
        return o != null ? o : outboxes.computeIfAbsent(loop, l -> new LoopOutbox(l, maxLoopBacklogBytes));
    }
}
