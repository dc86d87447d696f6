package dev.crossbar.bench.load;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;

/**
 * Builds a benchmark message as a whole client-to-server WebSocket frame (binary, final, masked
 * with the given key) in one pass over the body.
 *
 * <p>Why not Netty's encoder: it needs the message built first and then copies it again while
 * masking, an int at a time with a capacity check each; at 1 MiB a message that was half the load
 * generator's CPU, CPU the relay under test then lacked. The frame is written to the channel as a
 * plain {@link ByteBuf}, which Netty's WebSocket encoder passes through untouched.
 */
final class MaskedFrames {

    private static final int FIN_BINARY = 0x82;
    private static final int MASKED = 0x80;

    private MaskedFrames() {
    }

    /** Frame header length, mask key included, for a payload of {@code length} bytes. */
    static int headerLength(int length) {
        return (length < 126 ? 2 : length <= 0xFFFF ? 4 : 10) + 4;
    }

    /** Message {@code seq} of {@code sender} as a masked frame; the caller owns the returned buffer. */
    static ByteBuf encode(ByteBufAllocator alloc, MessageFormat format, int sender, long seq, long sendNanos,
                          int maskKey) {
        int size = format.size();
        ByteBuf buf = alloc.directBuffer(headerLength(size) + size);
        buf.writeByte(FIN_BINARY);
        if (size < 126) {
            buf.writeByte(MASKED | size);
        } else if (size <= 0xFFFF) {
            buf.writeByte(MASKED | 126).writeShort(size);
        } else {
            buf.writeByte(MASKED | 127).writeLong(size);
        }
        buf.writeInt(maskKey);

        int payloadStart = buf.writerIndex();
        format.writeHeader(buf, sender, seq, sendNanos);
        for (int i = payloadStart; i < buf.writerIndex(); i++) {
            buf.setByte(i, buf.getByte(i) ^ maskByte(maskKey, i - payloadStart));
        }

        // The body, eight bytes at a time: payload byte k is masked with key byte k % 4, so every
        // eight-byte step from the body's start meets the same eight mask bytes.
        int bodyStart = buf.writerIndex() - payloadStart;
        int rotated = Integer.rotateLeft(maskKey, 8 * (bodyStart & 3));
        long mask = (rotated & 0xFFFFFFFFL) | ((long) rotated << 32);
        ByteBuffer body = format.bodyView(seq);
        int n = body.remaining();
        int out = buf.writerIndex();
        int i = 0;
        for (; i + 8 <= n; i += 8) {
            buf.setLong(out + i, body.getLong(i) ^ mask);
        }
        for (; i < n; i++) {
            buf.setByte(out + i, body.get(i) ^ maskByte(maskKey, bodyStart + i));
        }
        buf.writerIndex(out + n);
        return buf;
    }

    private static int maskByte(int maskKey, int payloadIndex) {
        return maskKey >>> (24 - 8 * (payloadIndex & 3));
    }
}
