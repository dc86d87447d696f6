package dev.crossbar.core.relay;

import dev.crossbar.core.route.Route;
import dev.crossbar.core.stats.ConnectionStats;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.concurrent.EventExecutor;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** A member that records what it is given, checking it is called on its own loop. */
final class RecordingMember implements Member {

    final EventExecutor loop;
    final Route route;
    final ConnectionStats stats = ConnectionStats.startingNow();
    final List<byte[]> received = new CopyOnWriteArrayList<>();
    /** Each delivered frame's buffer, not retained: only to tell whether two messages shared one. */
    final List<ByteBuf> contents = new CopyOnWriteArrayList<>();
    final AtomicInteger flushes = new AtomicInteger();
    final AtomicInteger wrongThread = new AtomicInteger();
    /** Frames whose bytes are not direct: each would be copied again by every socket write. */
    final AtomicInteger heapFrames = new AtomicInteger();
    private boolean dirty;
    /** What {@link #maySend()} answers, as access control would set it. */
    volatile boolean maySend = true;
    /** Make {@link #deliver} or {@link #flush} throw, as a broken receiver would. */
    volatile boolean failDeliver;
    volatile boolean failFlush;
    /** Take runs whole (as a session does), recording each run's length; else one frame at a time. */
    volatile boolean takesRuns;
    final List<Integer> runLengths = new CopyOnWriteArrayList<>();
    /** What was wrong with a run: a frame in its buffer unlike its message, bytes past its frames. */
    final List<String> runFaults = new CopyOnWriteArrayList<>();
    /** Runs at the start of each {@link #flush}, on this member's loop. */
    volatile Runnable beforeFlush = () -> { };

    RecordingMember(EventExecutor loop, Route route) {
        this.loop = loop;
        this.route = route;
    }

    @Override
    public EventExecutor executor() {
        return loop;
    }

    @Override
    public Route route() {
        return route;
    }

    @Override
    public ConnectionStats stats() {
        return stats;
    }

    @Override
    public boolean maySend() {
        return maySend;
    }

    @Override
    public boolean deliver(PreparedFrame frame) {
        if (!loop.inEventLoop()) {
            wrongThread.incrementAndGet();
        }
        if (failDeliver) {
            throw new IllegalStateException("deliver failed (test)");
        }
        if (!frame.content().isDirect()) {
            heapFrames.incrementAndGet();
        }
        contents.add(frame.content());
        ByteBuf dup = frame.content().retainedDuplicate();
        try {
            byte[] bytes = new byte[dup.readableBytes()];
            dup.readBytes(bytes);
            received.add(bytes);
        } finally {
            dup.release();
        }
        stats.recordOut(frame.payloadLength(), System.nanoTime());
        boolean first = !dirty;
        dirty = true;
        return first;
    }

    @Override
    public void flush() {
        beforeFlush.run();
        if (failFlush) {
            throw new IllegalStateException("flush failed (test)");
        }
        dirty = false;
        flushes.incrementAndGet();
    }
}
