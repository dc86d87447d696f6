package dev.crossbar.server.websocket;

import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Copies a client frame's masked payload out of what the socket reads gathered and unmasks it in
 * the same pass: each 8 bytes read once, XORed with the key, written once.
 *
 * <p>Why: Netty's decoder copies the payload into a new buffer, then unmasks that buffer in place,
 * a second pass; profiled on 1 MiB messages (files, images) the two passes were a quarter of the
 * relay's CPU. The loop works between the buffers' memory addresses when both have one
 * (the socket's reads and the allocator's direct buffers do), else on NIO views of them, 8 bytes at
 * a time in the machine's byte order.
 */
final class UnmaskingCopy {

    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();
    /** Buffers and direct views are unmasked through their addresses where the JVM allows unaligned longs there. */
    private static final boolean BY_ADDRESS = PlatformDependent.hasUnsafe() && PlatformDependent.isUnaligned();
    /**
     * Where either buffer has no address (a heap buffer): payloads from this size are unmasked in
     * one pass over NIO views. Smaller ones are copied, then unmasked in place through the buffer's
     * own accessors, as Netty does: as fast for a few dozen bytes (UnmaskLoopBenchmark), and
     * without the 100-200 bytes of view objects a buffer's first NIO view costs, which would be
     * most of a small message's garbage.
     */
    static final int ONE_PASS_FROM_BYTES = 1024;

    private UnmaskingCopy() {
    }

    /**
     * {@code out} holding, at its writer index, the {@code length} bytes at {@code in}'s reader index
     * XORed with {@code key} (RFC 6455 section 5.3: byte i with key byte i mod 4, big-endian);
     * advances both indexes. {@code out} must have room: this takes it, and returns it to the
     * caller or releases it if the copy fails; {@code in} stays the caller's.
     */
    static ByteBuf copy(ByteBuf out, ByteBuf in, int length, int key) {
        try {
            append(in, length, key, out);
            return out;
        } catch (RuntimeException | Error e) {
            out.release();
            throw e;
        }
    }

    /**
     * Writes the {@code length} bytes at {@code in}'s reader index, XORed with {@code key}, at
     * {@code out}'s writer index; advances both indexes. {@code out} must have room for them.
     */
    static void append(ByteBuf in, int length, int key, ByteBuf out) {
        int from = in.readerIndex();
        int to = out.writerIndex();
        if (BY_ADDRESS && in.hasMemoryAddress() && out.hasMemoryAddress()) {
            // The common case (direct pooled buffers both): one pass between addresses, whatever the
            // length. Through the buffers' NIO views a small payload cost a view object per copy
            // (7 % of the relay's user-space CPU in ping-pong); their accessors, a check per long.
            if (length < 0 || length > in.readableBytes() || length > out.writableBytes()) {
                throw new IndexOutOfBoundsException("length: " + length + " (expected: 0 to "
                        + Math.min(in.readableBytes(), out.writableBytes()) + ")");
            }
            xor(in.memoryAddress() + from, out.memoryAddress() + to, length, key, mask(key));
            out.writerIndex(to + length);
        } else if (key == 0 || length < ONE_PASS_FROM_BYTES || out.nioBufferCount() != 1) {
            in.getBytes(from, out, length); // the source's copy: direct to direct, it allocates nothing
            if (key != 0) {
                unmaskInPlace(out, to, key);
            }
        } else {
            ByteBuffer dst = out.internalNioBuffer(to, length);
            ByteOrder dstOrder = dst.order();
            dst.order(NATIVE);
            try {
                int at = dst.position();
                if (in.nioBufferCount() == 1) {
                    xor(in.internalNioBuffer(from, length), dst, at, key);
                } else {
                    for (ByteBuffer src : in.nioBuffers(from, length)) {
                        int n = src.remaining();
                        xor(src, dst, at, key);
                        at += n;
                        key = Integer.rotateLeft(key, 8 * (n & 3)); // the key byte the next piece starts with
                    }
                }
            } finally {
                dst.order(dstOrder);
            }
            out.writerIndex(to + length);
        }
        in.readerIndex(from + length);
    }

    /**
     * XORs {@code src}'s remaining bytes into {@code dst} from {@code at}, the first with
     * {@code key}'s most significant byte. Longs in the machine's own byte order: measured
     * ({@code UnmaskLoopBenchmark}) about three times as fast as big-endian ones, which cost a byte
     * swap each. Leaves {@code src}'s order as it found it (it may
     * be a buffer's internal view).
     */
    private static void xor(ByteBuffer src, ByteBuffer dst, int at, int key) {
        long mask = mask(key);
        if (BY_ADDRESS && src.isDirect() && dst.isDirect()) {
            xor(PlatformDependent.directBufferAddress(src) + src.position(),
                    PlatformDependent.directBufferAddress(dst) + at, src.remaining(), key, mask);
            return;
        }
        ByteOrder srcOrder = src.order();
        src.order(NATIVE);
        try {
            int s = src.position();
            int n = src.remaining();
            int i = 0;
            for (; i <= n - 8; i += 8) {
                dst.putLong(at + i, src.getLong(s + i) ^ mask);
            }
            for (; i < n; i++) { // the last 0-7 bytes; i is a multiple of 8 plus i & 3 into the key
                dst.put(at + i, (byte) (src.get(s + i) ^ (key >>> (24 - 8 * (i & 3)))));
            }
        } finally {
            src.order(srcOrder);
        }
    }

    /** The key's bytes in wire order, twice, as a long in the machine's byte order. */
    private static long mask(int key) {
        long k = key & 0xFFFF_FFFFL;
        long mask = k << 32 | k;
        return NATIVE == ByteOrder.LITTLE_ENDIAN ? Long.reverseBytes(mask) : mask;
    }

    /**
     * As above, between two addresses: the loop with no bounds or scope check per long, which the
     * JIT unrolls. Why: over a ByteBuffer's accessors it was a fifth of the relay's CPU relaying
     * 1 MiB messages (async-profiler), about a nanosecond per 8 bytes. The views' bounds were
     * checked when they were made, for exactly these bytes.
     */
    private static void xor(long src, long dst, int n, int key, long mask) {
        int i = 0;
        for (; i <= n - 8; i += 8) {
            PlatformDependent.putLong(dst + i, PlatformDependent.getLong(src + i) ^ mask);
        }
        for (; i < n; i++) {
            byte b = PlatformDependent.getByte(src + i);
            PlatformDependent.putByte(dst + i, (byte) (b ^ (key >>> (24 - 8 * (i & 3)))));
        }
    }

    /** Small payloads, and a buffer in more than one piece: {@code buf}'s bytes from {@code from} on. */
    private static void unmaskInPlace(ByteBuf buf, int from, int key) {
        long k = key & 0xFFFF_FFFFL;
        long mask = k << 32 | k;
        int i = from;
        int end = buf.writerIndex();
        for (; i <= end - 8; i += 8) {
            buf.setLong(i, buf.getLong(i) ^ mask);
        }
        for (int j = 0; i < end; i++, j++) {
            buf.setByte(i, buf.getByte(i) ^ (int) (mask >>> (56 - 8 * j)));
        }
    }
}
