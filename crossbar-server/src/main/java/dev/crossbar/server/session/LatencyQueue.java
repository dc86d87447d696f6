package dev.crossbar.server.session;

import dev.crossbar.core.relay.PreparedFrame;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * A receiver's own queue on a stream with {@code max-latency}: messages wait here rather than in the
 * socket's buffers, so that ones that have waited too long can still be dropped. When the oldest
 * is older than the bound, the receiver is behind and skips forward: on a keyframe stream to the
 * latest keyframe queued (the message holding it cut so that it starts with the keyframe's packet;
 * with none queued, everything goes and the receiver waits for the next one), on any other stream
 * past the stale messages.
 *
 * <p>Ownership: holds one reference to each queued frame ({@link #offer} takes the caller's);
 * {@link #poll} hands it back to the caller; dropped frames are released here; {@link #clear}
 * releases the rest. Used on the receiver's event loop only.
 */
final class LatencyQueue {

    private final ArrayDeque<PreparedFrame> frames = new ArrayDeque<>();
    private final long maxAgeNanos;
    /** Whether skips go to a keyframe (a {@code start=keyframe} stream) or past stale messages. */
    private final boolean toKeyframe;
    private final long maxBytes;
    private long bytes;
    /** Skipped with no keyframe queued: drop until one comes. */
    private boolean awaitingKeyframe;

    LatencyQueue(long maxAgeNanos, boolean toKeyframe, long maxBytes) {
        this.maxAgeNanos = maxAgeNanos;
        this.toKeyframe = toKeyframe;
        this.maxBytes = maxBytes;
    }

    /**
     * Queues a frame, taking the caller's reference. Returns how many messages were dropped: the
     * frame itself while waiting for a keyframe or over the byte bound, and stale ones skipped.
     */
    int offer(PreparedFrame frame, long now, long socketDelayNanos, ByteBufAllocator alloc) {
        if (awaitingKeyframe) {
            if (frame.randomAccess() < 0) {
                frame.release();
                return 1;
            }
            awaitingKeyframe = false;
            frame = cut(frame, alloc);
        }
        if (bytes + frame.frameLength() > maxBytes && !frames.isEmpty()) {
            frame.release();
            return 1 + skipStale(now, socketDelayNanos, alloc);
        }
        frames.addLast(frame);
        bytes += frame.frameLength();
        return skipStale(now, socketDelayNanos, alloc);
    }

    /**
     * Drops what will have waited longer than the bound by the time the receiver reads it, as the
     * class comment says; returns how many. {@code socketDelayNanos} is how long a message written
     * now will wait in the socket's buffers (the receiver's pace estimated by the session).
     */
    int skipStale(long now, long socketDelayNanos, ByteBufAllocator alloc) {
        long limit = maxAgeNanos - socketDelayNanos;
        PreparedFrame head = frames.peekFirst();
        if (head == null || now - head.publishedAtNanos() <= limit) {
            return 0;
        }
        int dropped = 0;
        if (!toKeyframe) {
            while (head != null && now - head.publishedAtNanos() > limit) {
                drop(frames.pollFirst());
                dropped++;
                head = frames.peekFirst();
            }
            return dropped;
        }
        PreparedFrame keyframe = null;
        for (Iterator<PreparedFrame> it = frames.descendingIterator(); it.hasNext(); ) {
            PreparedFrame f = it.next();
            if (f.randomAccess() >= 0) {
                keyframe = f;
                break;
            }
        }
        while (!frames.isEmpty() && frames.peekFirst() != keyframe) {
            drop(frames.pollFirst());
            dropped++;
        }
        if (keyframe == null) {
            awaitingKeyframe = true;
        } else if (keyframe.randomAccess() > 0) {
            frames.pollFirst();
            bytes -= keyframe.frameLength();
            PreparedFrame cut = cut(keyframe, alloc);
            frames.addFirst(cut);
            bytes += cut.frameLength();
        }
        return dropped;
    }

    /** The next frame to write, with its reference, or null. */
    PreparedFrame poll() {
        PreparedFrame f = frames.pollFirst();
        if (f != null) {
            bytes -= f.frameLength();
        }
        return f;
    }

    boolean isEmpty() {
        return frames.isEmpty();
    }

    /** Whether the receiver is between a skip and the next keyframe. */
    boolean awaitingKeyframe() {
        return awaitingKeyframe;
    }

    void clear() {
        PreparedFrame f;
        while ((f = frames.pollFirst()) != null) {
            f.release();
        }
        bytes = 0;
    }

    private void drop(PreparedFrame f) {
        bytes -= f.frameLength();
        f.release();
    }

    /** The frame from its keyframe's packet on; releases the whole one. */
    private static PreparedFrame cut(PreparedFrame frame, ByteBufAllocator alloc) {
        if (frame.randomAccess() == 0) {
            return frame;
        }
        try {
            return frame.fromRandomAccess(alloc);
        } finally {
            frame.release();
        }
    }
}
