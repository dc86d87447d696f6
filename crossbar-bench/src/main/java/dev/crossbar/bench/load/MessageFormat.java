package dev.crossbar.bench.load;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;

/**
 * The bytes of one benchmark message of a fixed size, so a receiver can tell exactly which sent
 * message it got and whether it arrived whole.
 *
 * <p>Full form (size &ge; {@value #HEADER_BYTES}): a header {@code magic:u16 sender:u16 length:u32
 * seq:u64 sendNanos:u64}, then a body. Tiny form (3 to 23 bytes, one sender only): the low 24 bits
 * of the sequence, then a body; the send time is kept by the sender ({@link SendTimes}) because
 * it does not fit. The body is one of {@value #BODY_VARIANTS} fixed pseudo-random byte strings,
 * chosen by the sequence, so a receiver checks content with one memory compare and a body moved
 * between messages is still caught.
 */
final class MessageFormat {

    static final int MAGIC = 0xCB5E;
    static final int HEADER_BYTES = 24;
    /** Smallest message: the tiny form's 24-bit sequence. */
    static final int MIN_SIZE = 3;
    static final int TINY_SEQ_BYTES = 3;
    /**
     * Largest message the tool builds: VBDS's largest image, 4096x4096 at 4 bytes per pixel plus a
     * 16 KiB FITS header (64 MiB + 16 KiB), fits; the relays under test allow 10 MiB unless told
     * more. Below the client's {@link BenchClient#MAX_MESSAGE_BYTES}.
     */
    static final int MAX_SIZE = 80 * 1024 * 1024;
    /** Senders a full-form header can name (u16). */
    static final int MAX_SENDERS = 65_535;
    static final int BODY_VARIANTS = 4;

    static final int OFF_MAGIC = 0;
    static final int OFF_SENDER = 2;
    static final int OFF_LENGTH = 4;
    static final int OFF_SEQ = 8;
    static final int OFF_SEND_NANOS = 16;

    private final int size;
    private final boolean tiny;
    private final ByteBuf[] bodies;
    /** The same bodies as NIO buffers, for {@link #bodyMatches}. */
    private final ByteBuffer[] bodyViews;

    MessageFormat(int size) {
        if (size < MIN_SIZE || size > MAX_SIZE) {
            throw new IllegalArgumentException("size: " + size + " (expected: " + MIN_SIZE + ".." + MAX_SIZE + ")");
        }
        this.size = size;
        this.tiny = size < HEADER_BYTES;
        int bodyLength = size - headerLength();
        SplittableRandom random = new SplittableRandom(0xC0FFEE);
        bodies = new ByteBuf[BODY_VARIANTS];
        bodyViews = new ByteBuffer[BODY_VARIANTS];
        for (int i = 0; i < BODY_VARIANTS; i++) {
            byte[] b = new byte[bodyLength];
            // Eight bytes per draw: a 64 MiB body takes milliseconds rather than a second.
            ByteBuffer fill = ByteBuffer.wrap(b);
            while (fill.remaining() >= Long.BYTES) {
                fill.putLong(random.nextLong());
            }
            while (fill.hasRemaining()) {
                fill.put((byte) random.nextInt(256));
            }
            // Heap wrappers of plain arrays: never pooled, nothing to release.
            bodies[i] = io.netty.buffer.Unpooled.wrappedBuffer(b).asReadOnly();
            bodyViews[i] = ByteBuffer.wrap(b).asReadOnlyBuffer();
        }
    }

    int size() {
        return size;
    }

    boolean isTiny() {
        return tiny;
    }

    int headerLength() {
        return tiny ? TINY_SEQ_BYTES : HEADER_BYTES;
    }

    int bodyLength() {
        return size - headerLength();
    }

    /** The body message {@code seq} carries; borrowed, read-only. */
    ByteBuf body(long seq) {
        return bodies[(int) (seq & (BODY_VARIANTS - 1))];
    }

    /**
     * Whether {@code buf} holds, from {@code offset}, the body message {@code seq} carries.
     * {@link ByteBuffer#mismatch} compares with vector instructions; a byte-wise compare cost the
     * load generator half its CPU time when receiving 10 Gbit/s.
     */
    boolean bodyMatches(ByteBuf buf, int offset, long seq) {
        int length = bodyLength();
        if (length == 0) {
            return true;
        }
        return buf.nioBuffer(offset, length).mismatch(bodyView(seq)) == -1;
    }

    /** Builds message {@code seq} of {@code sender}; the caller owns the returned buffer. */
    ByteBuf encode(ByteBufAllocator alloc, int sender, long seq, long sendNanos) {
        ByteBuf buf = alloc.buffer(size);
        writeHeader(buf, sender, seq, sendNanos);
        ByteBuf body = body(seq);
        buf.writeBytes(body, body.readerIndex(), body.readableBytes());
        return buf;
    }

    /** Writes the {@link #headerLength()} bytes that precede the body of message {@code seq}. */
    void writeHeader(ByteBuf buf, int sender, long seq, long sendNanos) {
        if (tiny) {
            buf.writeMedium((int) (seq & 0xFFFFFF));
        } else {
            buf.writeShort(MAGIC).writeShort(sender).writeInt(size).writeLong(seq).writeLong(sendNanos);
        }
    }

    /** The body message {@code seq} carries, as a big-endian NIO view of its own; read-only. */
    ByteBuffer bodyView(long seq) {
        return bodyViews[(int) (seq & (BODY_VARIANTS - 1))].duplicate();
    }
}
