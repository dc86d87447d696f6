package dev.crossbar.core.relay;

import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.PlatformDependent;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fan-out work waiting for one event loop, batched the way grpc's {@code WriteQueue} is.
 *
 * <p>Any thread may {@link #offer}; at most one drain task is scheduled on the loop at a time. A
 * drain writes every queued delivery to its receivers without flushing, then flushes each touched
 * receiver once: a burst of messages costs one task and one flush (one syscall) per receiver, not
 * one per message. Messages queued back to back for the same receivers go to each as one
 * {@link FrameRun}: one write for the run, not one per message. Flushes go {@link #FLUSH_SLICE}
 * receivers at a time, with the loop's I/O between
 * slices, so a large fan-out does not keep the next message unread. The queue is bounded in bytes
 * ({@code maxBacklogBytes}); a delivery that does not fit is refused whole and its receivers count a
 * drop.
 *
 * <p>Ownership: a queued delivery holds one reference to its frame, released after the drain has
 * handed {@code retainedDuplicate()}s to the receivers (or if the loop refuses the task). A local
 * copy made for many receivers, or a run's buffer, is released by the drain once they have their
 * duplicates.
 */
final class LoopQueue implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(LoopQueue.class);

    /** Deliveries per drain before yielding the loop to I/O; keeps reads and timers responsive. */
    static final int MAX_DRAIN = 1024;
    /**
     * From this many receivers on, a message from another loop is copied into a buffer of this
     * loop's before it is written ({@link PreparedFrame#copy}): a 4,600-byte copy costs less than
     * the cache misses of counting hundreds of references on a buffer two loops share (7 % of a
     * loop's time writing video to 500 viewers, measured with async-profiler).
     */
    static final int LOCAL_COPY_MIN_RECEIVERS = 4;
    /**
     * From this many receivers on the reading loop itself, a message waits for the end of the
     * loop's batch ({@link #deliverHere}), so that the messages of one read go to them as a run, as
     * they do on the other loops; written one by one they cost each receiver a duplicate, an
     * outbound entry and a reference count per message.
     */
    static final int RUN_HERE_MIN_RECEIVERS = LOCAL_COPY_MIN_RECEIVERS;
    /** Larger messages are never copied: they are shared as composites and cost one reference each. */
    static final int LOCAL_COPY_MAX_BYTES = PreparedFrame.CONTIGUOUS_LIMIT;
    /**
     * Receivers flushed in one go before the loop gets back to its sockets: with thousands of
     * receivers a pass of flushes (a system call each) takes tens of milliseconds, and the next
     * message waits unread behind it. Between slices the loop reads, and what it reads joins the
     * flushes still to come (video to 5,000 viewers: p50 54 → 33 ms, p99 139 → 90 ms; docs/benchmarks/journal.md).
     */
    static final int FLUSH_SLICE = 256;

    private final EventExecutor loop;
    private final long maxBacklogBytes;
    private final Queue<Delivery> queue = PlatformDependent.newMpscQueue();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final AtomicLong backlogBytes = new AtomicLong();
    /** Receivers written but not yet flushed; touched only on {@link #loop}. */
    private final ArrayList<Member> unflushed = new ArrayList<>();
    /** Other loops' queues given work from this loop since its batch began; only on {@link #loop}. */
    private final ArrayList<LoopQueue> toWake = new ArrayList<>(4);
    /** Whether {@link #batchEnd} is queued on the loop; touched only on {@link #loop}. */
    private boolean batchEndScheduled;
    /** Whether messages read on this loop wait in the queue for {@link #batchEnd}; only on {@link #loop}. */
    private boolean drainAtBatchEnd;
    private final Runnable batchEnd = this::endBatch;
    /** Receivers written and due a flush, taken a slice at a time; touched only on {@link #loop}. */
    private final ArrayDeque<Member> flushing = new ArrayDeque<>();
    /** Whether {@link #nextSlice} is scheduled on the loop; touched only on {@link #loop}. */
    private boolean sliceScheduled;
    /** The deliveries of a run being written; reused, touched only on {@link #loop}. */
    private final List<Delivery> runDeliveries = new ArrayList<>();
    private final Runnable nextSlice = () -> {
        sliceScheduled = false;
        flushSlice();
    };

    LoopQueue(EventExecutor loop, long maxBacklogBytes) {
        this.loop = loop;
        this.maxBacklogBytes = maxBacklogBytes;
    }

    /** {@code here}: the message was read on this queue's loop, so its frame is this loop's already. */
    private record Delivery(PreparedFrame frame, Member[] receivers, Member sender, boolean here) {
    }

    /**
     * Queues {@code frame} for {@code receivers} (all but {@code sender}, if not null). Borrows the frame:
     * retains it when queued.
     *
     * @return false if the backlog is full and the message was not queued
     */
    boolean offer(PreparedFrame frame, Member[] receivers, Member sender) {
        if (!enqueue(frame, receivers, sender, false)) {
            return false;
        }
        schedule();
        return true;
    }

    /**
     * As {@link #offer}, but the other loop is woken when {@code origin}'s loop (the caller's) ends
     * its batch: a burst read from one socket, or many sockets ready at once, costs the receiving
     * loop one task and one wake-up, not one per message. Call on {@code origin}'s loop only.
     */
    boolean offerFrom(LoopQueue origin, PreparedFrame frame, Member[] receivers, Member sender) {
        if (!enqueue(frame, receivers, sender, false)) {
            return false;
        }
        if (!origin.toWake.contains(this)) {
            origin.toWake.add(this);
        }
        origin.scheduleBatchEnd();
        return true;
    }

    private boolean enqueue(PreparedFrame frame, Member[] receivers, Member sender, boolean here) {
        int size = frame.frameLength();
        long before = backlogBytes.getAndAdd(size);
        // An empty backlog always takes one message, however large, so a big message is never
        // refused merely for being big; the message-size limit is enforced before routing.
        if (before > 0 && before + size > maxBacklogBytes) {
            backlogBytes.getAndAdd(-size);
            return false;
        }
        queue.offer(new Delivery(frame.retain(), receivers, sender, here));
        return true;
    }

    /**
     * Delivers {@code frame} to {@code receivers} (all but {@code sender}) without a hand-off: the
     * caller is on this queue's loop, where the receivers live. A few receivers are written now; from
     * {@link #RUN_HERE_MIN_RECEIVERS} on, the message is queued here and written when the loop ends
     * its batch, with whatever else the batch brings the same receivers, as one run. Either way they
     * are flushed together at the batch's end (see {@link #scheduleBatchEnd}), so waiting for it
     * costs a message no time. Borrows the frame.
     *
     * @return false if the backlog is full and the message was not queued
     */
    boolean deliverHere(PreparedFrame frame, Member[] receivers, Member sender) {
        // Anything queued may be for these receivers: then this message goes behind it, in order.
        if (receivers.length >= RUN_HERE_MIN_RECEIVERS || !queue.isEmpty()) {
            if (!enqueue(frame, receivers, sender, true)) {
                return false;
            }
            drainAtBatchEnd = true;
            scheduleBatchEnd();
            return true;
        }
        for (Member receiver : receivers) {
            if (receiver != sender) {
                deliver(receiver, frame);
            }
        }
        if (!unflushed.isEmpty()) {
            scheduleBatchEnd();
        }
        return true;
    }

    /**
     * Queues {@link #endBatch} once: a task queued from the loop itself (no wake-up) runs after the
     * loop has handled every channel that was ready, so one flush per receiver and one wake-up per
     * other loop serve everything read in that pass. Call on {@link #loop} only.
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

    private void endBatch() {
        batchEndScheduled = false;
        // Wake the other loops first: they then write to their receivers while this one flushes
        // its own, instead of after (a flush per receiver is a system call each).
        for (int i = 0; i < toWake.size(); i++) {
            toWake.get(i).schedule();
        }
        toWake.clear();
        if (drainAtBatchEnd) {
            drainAtBatchEnd = false;
            // Unless a drain is already due (it will take these too), write them now; run() flushes.
            if (scheduled.compareAndSet(false, true)) {
                run();
                return;
            }
        }
        flushInSlices();
    }

    /**
     * Flushes the receivers written since the last call, {@link #FLUSH_SLICE} now and the rest in
     * tasks scheduled after the loop's next I/O. A receiver waiting for its slice still needs its
     * flush, so writes to it meanwhile do not list it again: they go out with that flush.
     */
    private void flushInSlices() {
        flushing.addAll(unflushed);
        unflushed.clear();
        flushSlice();
    }

    private void flushSlice() {
        Member receiver;
        for (int n = 0; n < FLUSH_SLICE && (receiver = flushing.poll()) != null; n++) {
            flush(receiver);
        }
        if (!flushing.isEmpty() && !sliceScheduled) {
            sliceScheduled = true;
            try {
                // Scheduled, not executed: the loop runs queued tasks before its I/O, scheduled
                // ones after it.
                loop.schedule(nextSlice, 0, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                sliceScheduled = false; // the loop is shutting down: finish now rather than never
                while ((receiver = flushing.poll()) != null) {
                    flush(receiver);
                }
            }
        }
    }

    long backlogBytes() {
        return backlogBytes.get();
    }

    private void schedule() {
        if (scheduled.compareAndSet(false, true)) {
            try {
                loop.execute(this);
            } catch (RejectedExecutionException e) {
                // The loop is shutting down: nobody will drain, so release what is queued.
                log.debug("event loop rejected fan-out task; releasing queued messages", e);
                discardAll();
            }
        }
    }

    @Override
    public void run() {
        Delivery d;
        int n = 0;
        try {
            while (n < MAX_DRAIN && (d = queue.poll()) != null) {
                n++;
                boolean copied = copiedHere(d);
                if (copied && continuesRun(d, queue.peek(), d.frame.frameLength())) {
                    n += drainRun(d, MAX_DRAIN - n);
                    continue;
                }
                PreparedFrame local = null;
                try {
                    PreparedFrame frame = d.frame;
                    if (copied && !d.here) {
                        local = localCopy(frame);
                        frame = local != null ? local : frame;
                    }
                    for (Member receiver : d.receivers) {
                        if (receiver != d.sender) {
                            deliver(receiver, frame);
                        }
                    }
                } finally {
                    if (local != null) {
                        local.release();
                    }
                    done(d);
                }
            }
            flushInSlices();
        } finally {
            // Whatever happened above, the loop must drain again: a lost reschedule would stop
            // this loop's fan-out for good.
            unflushed.clear();
            scheduled.set(false);
            if (!queue.isEmpty()) {
                schedule();
            }
        }
    }

    /** Whether {@code d}'s message is copied into a buffer of this loop's before it is written. */
    private static boolean copiedHere(Delivery d) {
        return d.receivers.length >= LOCAL_COPY_MIN_RECEIVERS && d.frame.frameLength() <= LOCAL_COPY_MAX_BYTES;
    }

    /**
     * Whether {@code next} (null: none) goes to the same receivers as {@code d}, from the same sender,
     * and fits in a run already {@code runBytes} long.
     */
    private static boolean continuesRun(Delivery d, Delivery next, int runBytes) {
        return next != null && next.receivers == d.receivers && next.sender == d.sender && copiedHere(next)
                && runBytes + next.frame.frameLength() <= FrameRun.MAX_BYTES;
    }

    /**
     * Writes {@code first} and the deliveries queued right behind it for the same receivers as one
     * {@link FrameRun}. Falls back to writing each from the shared frames if no run buffer can be had.
     *
     * @param room how many more deliveries this drain may take
     * @return how many deliveries it took from the queue besides {@code first}
     */
    private int drainRun(Delivery first, int room) {
        List<Delivery> run = runDeliveries;
        run.add(first);
        int bytes = first.frame.frameLength();
        Delivery next;
        while (run.size() <= room && continuesRun(first, next = queue.peek(), bytes)) {
            queue.poll();
            run.add(next);
            bytes += next.frame.frameLength();
        }
        PreparedFrame[] frames = new PreparedFrame[run.size()];
        for (int i = 0; i < frames.length; i++) {
            frames[i] = run.get(i).frame;
        }
        FrameRun copied = null;
        try {
            copied = FrameRun.copyOf(frames, ByteBufAllocator.DEFAULT);
        } catch (OutOfMemoryError | RuntimeException e) {
            log.debug("no run buffer for a fan-out; writing the shared frames one by one", e);
        }
        try {
            for (Member receiver : first.receivers) {
                if (receiver != first.sender) {
                    if (copied != null) {
                        deliverRun(receiver, copied);
                    } else {
                        for (PreparedFrame f : frames) {
                            deliver(receiver, f);
                        }
                    }
                }
            }
        } finally {
            if (copied != null) {
                copied.release();
            }
            for (Delivery d : run) {
                done(d);
            }
            run.clear();
        }
        return frames.length - 1;
    }

    /** A delivery is written: its bytes leave the backlog and its reference is given back. */
    private void done(Delivery d) {
        backlogBytes.getAndAdd(-d.frame.frameLength());
        d.frame.release();
    }

    /** A copy of {@code frame} for this loop, or null if none can be had now (the shared one will do). */
    private static PreparedFrame localCopy(PreparedFrame frame) {
        try {
            return frame.copy(ByteBufAllocator.DEFAULT);
        } catch (OutOfMemoryError | RuntimeException e) {
            log.debug("no local copy of a fan-out message; writing the shared one", e);
            return null;
        }
    }

    /** As {@link #deliver}, for a run of messages. */
    private void deliverRun(Member receiver, FrameRun run) {
        try {
            if (receiver.deliverRun(run)) {
                unflushed.add(receiver);
            }
        } catch (RuntimeException e) {
            log.warn("delivery to a receiver failed; it misses these messages, the others do not", e);
        }
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

    private static void flush(Member receiver) {
        try {
            receiver.flush();
        } catch (RuntimeException e) {
            log.warn("flushing a receiver failed", e);
        }
    }

    private void discardAll() {
        Delivery d;
        while ((d = queue.poll()) != null) {
            backlogBytes.getAndAdd(-d.frame.frameLength());
            d.frame.release();
        }
        scheduled.set(false);
    }
}
