package dev.crossbar.core.relay;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Consecutive messages of one stream for the same receivers, their frames copied back to back into
 * one buffer of the event loop that writes them: each receiver then writes the run with one
 * {@code retainedDuplicate()}, one outbound entry and one reference count, where it took one of
 * each per message. Fanning 4,600-byte messages out to 100 receivers, those per-message objects
 * were most of the writing loop's own (user-space) time, cache misses over thousands of them per
 * round (async-profiler, docs/benchmarks/journal.md "Writing a stream's messages as runs"). The frames
 * stay separate WebSocket frames: one message in is still one message out.
 *
 * <p>Ownership: the run owns its buffer and releases it in {@link #release()}; the frames are
 * borrowed (their owner releases them), kept so that a receiver that must take the messages one by
 * one (over its bound, or on a stream with its own pacing) still can.
 */
public final class FrameRun {

    /** Most bytes in one run: a normal allocation from {@link SharedFrameBuffers}' pool, and about a socket write. */
    public static final int MAX_BYTES = PreparedFrame.CONTIGUOUS_LIMIT;

    private final PreparedFrame[] frames;
    private final ByteBuf content;

    private FrameRun(PreparedFrame[] frames, ByteBuf content) {
        this.frames = frames;
        this.content = content;
    }

    /**
     * Copies {@code frames} (at least two, {@link #MAX_BYTES} in all at most) into one buffer
     * allocated on the calling thread. Borrows the frames, and keeps the array.
     */
    static FrameRun copyOf(PreparedFrame[] frames, ByteBufAllocator alloc) {
        int length = 0;
        for (PreparedFrame f : frames) {
            length += f.frameLength();
        }
        ByteBuf content = SharedFrameBuffers.forFrame(alloc, length).directBuffer(length, length);
        try {
            for (PreparedFrame f : frames) {
                ByteBuf c = f.content();
                content.writeBytes(c, c.readerIndex(), c.readableBytes());
            }
        } catch (Throwable t) {
            content.release();
            throw t;
        }
        return new FrameRun(frames, content);
    }

    /** How many messages. */
    public int count() {
        return frames.length;
    }

    /** The {@code i}th message, as its own frame; borrowed. */
    public PreparedFrame frame(int i) {
        return frames[i];
    }

    /** Every frame, back to back; borrowed: take a {@code retainedDuplicate()} to write it. */
    public ByteBuf content() {
        return content;
    }

    /** Bytes on the wire, headers included: what outbound-buffer bounds count. */
    public int length() {
        return content.readableBytes();
    }

    void release() {
        content.release();
    }
}
