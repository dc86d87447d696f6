package dev.crossbar.core.relay;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.PlatformDependent;
import java.util.ArrayList;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one event loop writes to its receivers, batched: every receiver written during a batch is
 * flushed once, at its end.
 *
 * <p>Two ways in. A message read on this loop is written to this loop's receivers at once, in the
 * thread that read it ({@link #writeHere}): no hand-off. A message read on another loop, or from
 * another node, is queued here ({@link #post}); the loop is woken once per batch of the sender's
 * loop, not once per message, and drains everything queued in one task. Either way each receiver
 * written is flushed once per batch: a burst costs one system call per receiver, not one per message.
 *
 * <p>The queue is bounded in bytes ({@code maxBacklogBytes}); a message that does not fit is
 * refused whole and its receivers count a drop. An empty queue takes any one message.
 *
 * <p>Ownership: a queued delivery holds one reference to its frame ({@link PreparedFrame#retain}),
 * released once every receiver has taken its own duplicate, or if the loop refuses the task.
 * Receivers borrow the frame ({@link Member#deliver}).
 */
final class LoopOutbox implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(LoopOutbox.class);

    /** Deliveries per drain before the loop gets back to its sockets; the rest in a task after them. */
    static final int MAX_DRAIN = 1024;

    private final EventExecutor loop;
    private final long maxBacklogBytes;
    private final Queue<Delivery> queue = PlatformDependent.newMpscQueue();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final AtomicLong backlogBytes = new AtomicLong();
    /** Receivers written since the last flush; this loop only. */
    private final ArrayList<Member> unflushed = new ArrayList<>();
    /** Other loops given messages by this loop's current batch, woken at its end; this loop only. */
    private final ArrayList<LoopOutbox> toWake = new ArrayList<>(4);
    /** Whether {@link #endBatch} is queued on the loop; this loop only. */
    private boolean batchEndScheduled;
    private final Runnable batchEnd = this::endBatch;

    LoopOutbox(EventExecutor loop, long maxBacklogBytes) {
        this.loop = loop;
        this.maxBacklogBytes = maxBacklogBytes;
    }

    private record Delivery(PreparedFrame frame, Member[] receivers, Member sender) {
    }

    /**
     * Writes {@code frame} now to {@code receivers} but {@code sender} (null: none); they are flushed
     * at the end of the loop's batch. Call on this loop only. Borrows the frame.
     */
    void writeHere(PreparedFrame frame, Member[] receivers, Member sender) {
        for (Member receiver : receivers) {
            if (receiver != sender) {
                deliver(receiver, frame);
            }
        }
        scheduleBatchEnd();
    }

    /**
     * Queues {@code frame} for {@code receivers} but {@code sender}. With an {@code origin} (the
     * caller's own loop's outbox, called on that loop) this loop is woken when the origin's batch
     * ends; without one (another node's message, any thread) at once. Borrows the frame.
     *
     * @return false if the backlog is full and the message was not queued
     */
    boolean post(PreparedFrame frame, Member[] receivers, Member sender, LoopOutbox origin) {
        int size = frame.frameLength();
        long before = backlogBytes.getAndAdd(size);
        if (before > 0 && before + size > maxBacklogBytes) {
            backlogBytes.getAndAdd(-size);
            return false;
        }
        queue.offer(new Delivery(frame.retain(), receivers, sender));
        if (origin == null) {
            scheduleDrain();
        } else {
            origin.wakeAtBatchEnd(this);
        }
        return true;
    }

    private void wakeAtBatchEnd(LoopOutbox other) {
        if (!toWake.contains(other)) {
            toWake.add(other);
        }
        scheduleBatchEnd();
    }

    /**
     * Queues {@link #endBatch} once per batch: a task queued by the loop on itself runs after it has
     * handled every channel that was ready, so one flush per receiver and one wake-up per other loop
     * serve everything read in that pass.
     */
    private void scheduleBatchEnd() {
        if (!batchEndScheduled) {
            batchEndScheduled = true;
            try {
                loop.execute(batchEnd);
            } catch (RejectedExecutionException e) {
                endBatch(); // the loop is shutting down: finish now rather than never
            }
        }
    }

    /** Wakes the other loops first (they write while this one flushes), then flushes this loop's receivers. */
    private void endBatch() {
        batchEndScheduled = false;
        for (int i = 0; i < toWake.size(); i++) {
            toWake.get(i).scheduleDrain();
        }
        toWake.clear();
        flushAll();
    }

    private void scheduleDrain() {
        if (drainScheduled.compareAndSet(false, true)) {
            try {
                loop.execute(this);
            } catch (RejectedExecutionException e) {
                log.debug("event loop rejected fan-out task; releasing queued messages", e);
                discardAll();
            }
        }
    }

    /** Drains the queue (up to {@link #MAX_DRAIN}) and flushes every receiver it wrote. */
    @Override
    public void run() {
        try {
            Delivery d;
            for (int n = 0; n < MAX_DRAIN && (d = queue.poll()) != null; n++) {
                try {
                    for (Member receiver : d.receivers) {
                        if (receiver != d.sender) {
                            deliver(receiver, d.frame);
                        }
                    }
                } finally {
                    backlogBytes.getAndAdd(-d.frame.frameLength());
                    d.frame.release();
                }
            }
            flushAll();
        } finally {
            // Whatever happened above, the loop must drain again: a lost reschedule would stop its fan-out for good.
            drainScheduled.set(false);
            if (!queue.isEmpty()) {
                scheduleDrain();
            }
        }
    }

    long backlogBytes() {
        return backlogBytes.get();
    }

    /** One receiver's failure is its own: the message still goes to the others. */
    private void deliver(Member receiver, PreparedFrame frame) {
        try {
            if (receiver.deliver(frame)) {
                unflushed.add(receiver);
            }
        } catch (RuntimeException e) {
            log.warn("delivery to a receiver failed; it misses this message, the others do not", e);
        }
    }

    private void flushAll() {
        for (int i = 0; i < unflushed.size(); i++) {
            try {
                unflushed.get(i).flush();
            } catch (RuntimeException e) {
                log.warn("flushing a receiver failed", e);
            }
        }
        unflushed.clear();
    }

    private void discardAll() {
        Delivery d;
        while ((d = queue.poll()) != null) {
            backlogBytes.getAndAdd(-d.frame.frameLength());
            d.frame.release();
        }
        drainScheduled.set(false);
    }
}
