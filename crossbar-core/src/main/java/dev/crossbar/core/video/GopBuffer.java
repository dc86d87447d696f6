package dev.crossbar.core.video;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * One publisher's messages since its latest random-access point (the current group of pictures),
 * bounded in bytes, replayed to a viewer who joins mid-stream so that its first bytes are a
 * keyframe's packet. Fed with each message and the offset {@link RandomAccessTracker#feed} returned
 * for it. Not thread-safe: the topic calls it under its lock.
 *
 * <h2>What it holds</h2>
 * Nothing before the first random-access point. At a point it releases the previous group and
 * starts again from the point's packet: a {@code retainedSlice} of the message from the offset on,
 * or, when the packet began in earlier messages (negative offset), a copy of that packet's earlier
 * bytes followed by the message. For this it copies the last {@value RandomAccessTracker#MAX_CARRY}
 * bytes of every message it is given (all of the stream's first
 * {@value RandomAccessTracker#DETECTION_BYTES}, while the tracker is still detecting). Each later message is kept whole as a {@code retainedSlice}.
 * If the group would exceed {@code maxBytes} it is dropped, {@link #overflows() counted}, and nothing
 * is held until the next point: a newcomer then gets the live stream only, as without this buffer.
 *
 * <h2>Ownership</h2>
 * {@link #add} takes no reference from the caller and leaves the message's indices alone; the buffer
 * owns the slices it made and releases them at the next point, on overflow, or in {@link #release}.
 * {@link #replay} returns {@code retainedDuplicate}s: the caller releases each. A slice keeps its
 * whole message alive, so memory held can exceed {@link #bytes()} by the part of the first message
 * before the cut.
 */
public final class GopBuffer {

    /**
     * Default bound: 4 MiB holds a 2 s group at 16 Mbit/s, well above a jsmpeg stream (MPEG-1 at 1-2
     * Mbit/s) and a typical 1080p H.264 camera (4-8 Mbit/s, 1-2 s between keyframes).
     */
    public static final int DEFAULT_MAX_BYTES = 4 * 1024 * 1024;

    private final int maxBytes;
    private final LongSupplier clock;
    private final List<ByteBuf> held = new ArrayList<>();
    /** The last bytes added, oldest first, for a point whose packet began before its message. */
    private final byte[] tail = new byte[RandomAccessTracker.DETECTION_BYTES];
    private int tailLength;
    private long streamBytes;
    private int bytes;
    private long startedAtNanos;
    private long groups;
    private long overflows;

    /** A buffer holding at most {@code maxBytes} bytes of one group of pictures. */
    public GopBuffer(int maxBytes) {
        this(maxBytes, System::nanoTime);
    }

    GopBuffer(int maxBytes, LongSupplier clock) {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("maxBytes: " + maxBytes + " (expected: > 0)");
        }
        this.maxBytes = maxBytes;
        this.clock = requireNonNull(clock, "clock");
    }

    /**
     * Adds the publisher's next message. {@code randomAccessOffset} is what
     * {@link RandomAccessTracker#feed} returned for it: {@link RandomAccessTracker#NONE}, or where the
     * last random-access point it completes begins, relative to the reader index (negative: that many
     * bytes before this message, which must have been added here).
     *
     * @throws IllegalArgumentException if the offset is outside the message or reaches further back
     *     than the bytes this buffer was given
     */
    public void add(ByteBuf message, int randomAccessOffset) {
        requireNonNull(message, "message");
        int length = message.readableBytes();
        if (randomAccessOffset != RandomAccessTracker.NONE) {
            if (randomAccessOffset >= length || randomAccessOffset < -tailLength) {
                throw new IllegalArgumentException("randomAccessOffset: " + randomAccessOffset
                        + " (expected: " + -tailLength + ".." + (length - 1) + " or NONE)");
            }
            startGroup(message, randomAccessOffset);
        } else if (!held.isEmpty()) {
            if (bytes + length > maxBytes) {
                overflow();
            } else {
                held.add(message.retainedSlice());
                bytes += length;
            }
        }
        keepTail(message);
    }

    /** The held group for a newcomer, oldest first: retained duplicates the caller releases. */
    public List<ByteBuf> replay() {
        List<ByteBuf> out = new ArrayList<>(held.size());
        for (ByteBuf b : held) {
            out.add(b.retainedDuplicate());
        }
        return out;
    }

    /** Bytes held (readable bytes of the held messages). */
    public int bytes() {
        return bytes;
    }

    /** Messages held. */
    public int messages() {
        return held.size();
    }

    /** Nanoseconds since the held group's first message was added, or 0 when nothing is held. */
    public long ageNanos(long nowNanos) {
        return held.isEmpty() ? 0 : nowNanos - startedAtNanos;
    }

    /** Groups started (random-access points added), overflowed ones included. */
    public long groups() {
        return groups;
    }

    /** Groups dropped for exceeding {@code maxBytes}. */
    public long overflows() {
        return overflows;
    }

    /** The bound given at construction. */
    public int maxBytes() {
        return maxBytes;
    }

    /** Releases everything held (the topic is gone); the buffer then holds nothing until the next point. */
    public void release() {
        for (ByteBuf b : held) {
            b.release();
        }
        held.clear();
        bytes = 0;
    }

    private void startGroup(ByteBuf message, int offset) {
        release();
        groups++;
        int from = message.readerIndex();
        int length = message.readableBytes();
        int groupBytes = length - offset;
        if (groupBytes > maxBytes) {
            overflows++;
            return;
        }
        ByteBuf first;
        if (offset >= 0) {
            first = message.retainedSlice(from + offset, groupBytes);
        } else {
            // The point's packet began in earlier messages: join its carried bytes and this message.
            first = message.alloc().buffer(groupBytes);
            first.writeBytes(tail, tailLength + offset, -offset);
            first.writeBytes(message, from, length);
        }
        held.add(first);
        bytes = groupBytes;
        startedAtNanos = clock.getAsLong();
    }

    private void overflow() {
        release();
        overflows++;
    }

    /** Keeps the stream's last {@code MAX_CARRY} bytes (all of them while it is shorter than the window). */
    private void keepTail(ByteBuf message) {
        int length = message.readableBytes();
        streamBytes += length;
        int keep = streamBytes < RandomAccessTracker.DETECTION_BYTES ? tail.length : RandomAccessTracker.MAX_CARRY;
        if (length >= keep) {
            message.getBytes(message.writerIndex() - keep, tail, 0, keep);
            tailLength = keep;
            return;
        }
        int old = Math.min(tailLength, keep - length);
        System.arraycopy(tail, tailLength - old, tail, 0, old);
        message.getBytes(message.readerIndex(), tail, old, length);
        tailLength = old + length;
    }
}
