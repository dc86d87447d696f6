package dev.crossbar.core.relay;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * One relayed message as the bytes of a server-to-client WebSocket frame, built once and shared.
 *
 * <p>Server frames are unmasked and Crossbar negotiates no per-connection extension, so the frame
 * is the same for every receiver: a 2-10 byte header and the payload. Below
 * {@link #CONTIGUOUS_LIMIT} the two are copied into one buffer: copying a few kilobytes once is
 * cheaper than handing a two-part composite to every receiver's socket write (a gathering write,
 * and an array of NIO buffers built per receiver). Larger payloads are joined in a composite
 * buffer without copying. A payload read into a {@link #payloadBuffer} already has its header in
 * front and becomes the frame as it is: no second buffer, no copy. Each receiver writes a
 * {@code retainedDuplicate()} of {@link #content()}; the frame itself holds one reference, released
 * by whoever made it. Buffers come from the allocator the caller gives: the relay's is
 * {@link RelayBuffers}, whose duplicates are recycled rather than garbage.
 */
public final class PreparedFrame {

    static final int OPCODE_TEXT = 0x1;
    static final int OPCODE_BINARY = 0x2;
    private static final int FIN = 0x80;
    /** Payloads smaller than this are copied behind their header into one buffer. */
    public static final int CONTIGUOUS_LIMIT = 64 * 1024;

    private final ByteBuf content;
    private final boolean text;
    private final int payloadLength;
    private final long publishedAtNanos;
    /** Where in the payload a receiver that skipped forward may start, or -1 (set before sharing). */
    private int randomAccess = -1;

    private PreparedFrame(ByteBuf content, boolean text, int payloadLength, long publishedAtNanos) {
        this.content = content;
        this.text = text;
        this.payloadLength = payloadLength;
        this.publishedAtNanos = publishedAtNanos;
    }

    /**
     * A buffer to read a {@code length}-byte payload into, below {@link #CONTIGUOUS_LIMIT}, that
     * {@link #of} frames as it is: the frame's header is written first and skipped, so the payload
     * goes at the writer index and the buffer's readable bytes are the payload alone. Why: the
     * decoder copies every payload out of the socket's reads anyway; framing it then cost a second
     * buffer and a second copy per message (allocating and freeing buffers was the largest part of
     * the relay's user-space CPU in ping-pong). The caller owns the buffer.
     */
    public static ByteBuf payloadBuffer(ByteBufAllocator alloc, boolean text, int length) {
        if (length < 0 || length >= CONTIGUOUS_LIMIT) {
            throw new IllegalArgumentException(
                    "length: " + length + " (expected: 0 to " + (CONTIGUOUS_LIMIT - 1) + ")");
        }
        int header = headerLength(length);
        ByteBuf buf = alloc.directBuffer(header + length, header + length);
        writeHeader(buf, text, length);
        buf.readerIndex(header);
        return buf;
    }

    /**
     * Frames {@code payload} as one final text or binary frame.
     *
     * <p>Ownership: takes the caller's reference to {@code payload}: released here once copied (below
     * {@link #CONTIGUOUS_LIMIT}), otherwise held by the frame and released with it; a
     * {@link #payloadBuffer} that is the caller's alone becomes the frame's content.
     */
    public static PreparedFrame of(ByteBufAllocator alloc, boolean text, ByteBuf payload) {
        return of(alloc, text, payload, System.nanoTime());
    }

    /**
     * As above, stamped with the {@link System#nanoTime()} at which the relay received the message,
     * which receivers record as their "last message out" instead of reading the clock once each.
     */
    public static PreparedFrame of(ByteBufAllocator alloc, boolean text, ByteBuf payload, long publishedAtNanos) {
        requireNonNull(alloc, "alloc");
        requireNonNull(payload, "payload");
        int length = payload.readableBytes();
        if (length < CONTIGUOUS_LIMIT && headerInFront(payload, text, length)) {
            payload.readerIndex(payload.readerIndex() - headerLength(length));
            return new PreparedFrame(payload, text, length, publishedAtNanos);
        }
        ByteBuf frame;
        try {
            int frameLength = headerLength(length) + length;
            frame = length < CONTIGUOUS_LIMIT ? alloc.directBuffer(frameLength, frameLength)
                    : alloc.directBuffer(headerLength(length));
        } catch (Throwable t) {
            payload.release();
            throw t;
        }
        writeHeader(frame, text, length);
        if (length < CONTIGUOUS_LIMIT) {
            try {
                frame.writeBytes(payload, payload.readerIndex(), length);
            } catch (Throwable t) {
                frame.release();
                throw t;
            } finally {
                payload.release();
            }
        } else {
            // Room for every piece: past its maximum a composite copies all of them into one
            // buffer, and a payload that arrived in pieces is a composite of up to hundreds.
            int pieces = payload instanceof CompositeByteBuf c ? c.numComponents() : 1;
            CompositeByteBuf joined = alloc.compositeDirectBuffer(1 + pieces);
            joined.addComponent(true, frame);
            joined.addFlattenedComponents(true, payload);
            frame = joined;
        }
        return new PreparedFrame(frame, text, length, publishedAtNanos);
    }

    private static void writeHeader(ByteBuf frame, boolean text, int length) {
        frame.writeByte(FIN | (text ? OPCODE_TEXT : OPCODE_BINARY));
        if (length < 126) {
            frame.writeByte(length);
        } else if (length <= 0xFFFF) {
            frame.writeByte(126).writeShort(length);
        } else {
            frame.writeByte(127).writeLong(length);
        }
    }

    /**
     * Whether the bytes before {@code payload}'s reader index are already this frame's header, and
     * the buffer is the caller's alone (one reference), so that moving its reader index back
     * disturbs nobody: what a {@link #payloadBuffer} holds. The bytes are only read, never written:
     * any buffer that happens to match is framed correctly too.
     */
    private static boolean headerInFront(ByteBuf payload, boolean text, int length) {
        int header = headerLength(length);
        int at = payload.readerIndex() - header;
        if (at < 0 || payload.refCnt() != 1) {
            return false;
        }
        if (payload.getByte(at) != (byte) (FIN | (text ? OPCODE_TEXT : OPCODE_BINARY))) {
            return false;
        }
        return header == 2 ? payload.getByte(at + 1) == length
                : payload.getByte(at + 1) == 126 && payload.getUnsignedShort(at + 2) == length;
    }

    static int headerLength(int payloadLength) {
        return payloadLength < 126 ? 2 : payloadLength <= 0xFFFF ? 4 : 10;
    }

    /** The whole frame, header and payload; borrowed: take a {@code retainedDuplicate()} to write it. */
    public ByteBuf content() {
        return content;
    }

    /** {@link System#nanoTime()} when the relay received this message. */
    public long publishedAtNanos() {
        return publishedAtNanos;
    }

    public boolean isText() {
        return text;
    }

    /** The message's size, without the frame header: what statistics count as bytes. */
    public int payloadLength() {
        return payloadLength;
    }

    /** Frame size on the wire, header included: what outbound-buffer bounds count. */
    public int frameLength() {
        return content.readableBytes();
    }

    /** Marks where in the payload a receiver may start (a keyframe's first packet), or -1. */
    public PreparedFrame randomAccessAt(int payloadOffset) {
        this.randomAccess = payloadOffset;
        return this;
    }

    /** Where in the payload a receiver that skipped forward may start, or -1 when it may not. */
    public int randomAccess() {
        return randomAccess;
    }

    /**
     * The payload from {@link #randomAccess()} on, framed anew for a receiver that starts here.
     * The caller releases the returned frame.
     */
    public PreparedFrame fromRandomAccess(ByteBufAllocator alloc) {
        if (randomAccess < 0) {
            throw new IllegalStateException("no random-access point in this message");
        }
        int header = headerLength(payloadLength);
        ByteBuf tail = content.retainedSlice(content.readerIndex() + header + randomAccess, payloadLength - randomAccess);
        return of(alloc, text, tail, publishedAtNanos).randomAccessAt(0);
    }

    public PreparedFrame retain() {
        content.retain();
        return this;
    }

    public boolean release() {
        return content.release();
    }

    public int refCnt() {
        return content.refCnt();
    }
}
