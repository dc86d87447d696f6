package dev.crossbar.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Ways to copy a masked payload out of a direct buffer and unmask it, each making a new buffer as a
 * decoder does: why the relay's {@code UnmaskingCopy} reads and writes longs in the machine's byte
 * order in one pass. {@code copyOnly} is the floor (a plain copy, no unmasking);
 * {@code copyThenUnmask} is Netty's decoder (a copy, then {@code getLong}/{@code setLong} over the
 * copy); {@code oneBigEndianPass} and {@code oneNativeOrderPass} fuse the two, with big-endian
 * longs as they come off the wire or with the machine's own.
 */
@State(Scope.Thread)
@Fork(value = 1, jvmArgsPrepend = {"--add-opens", "java.base/java.nio=ALL-UNNAMED", "-Dio.netty.tryReflectionSetAccessible=true"},
        jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Xms256m", "-Xmx256m", "-XX:MaxDirectMemorySize=256m"})
public class UnmaskLoopBenchmark extends AbstractBenchmark {

    private static final int KEY = 0x5A3C_96E1;

    @Param({"64", "4600", "1048576"})
    int size;

    private final ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
    private ByteBuf src;

    @Setup
    public void setUp() {
        src = alloc.directBuffer(size).writeZero(size);
    }

    @TearDown
    public void tearDown() {
        src.release();
    }

    private static long bigEndianMask() {
        long k = KEY & 0xFFFF_FFFFL;
        return k << 32 | k;
    }

    @Benchmark
    public int copyOnly() {
        ByteBuf out = alloc.buffer(size);
        out.writeBytes(src, 0, size);
        return done(out);
    }

    @Benchmark
    public int copyThenUnmask() {
        ByteBuf out = alloc.buffer(size);
        out.writeBytes(src, 0, size);
        long mask = bigEndianMask();
        for (int i = 0; i <= size - 8; i += 8) {
            out.setLong(i, out.getLong(i) ^ mask);
        }
        return done(out);
    }

    @Benchmark
    public int oneBigEndianPass() {
        return onePass(ByteOrder.BIG_ENDIAN, bigEndianMask());
    }

    @Benchmark
    public int oneNativeOrderPass() {
        long mask = bigEndianMask();
        return onePass(ByteOrder.nativeOrder(), ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? Long.reverseBytes(mask) : mask);
    }

    @Benchmark
    public int copyThenUnmaskLittleEndian() {
        ByteBuf out = alloc.buffer(size);
        out.writeBytes(src, 0, size);
        long mask = Long.reverseBytes(bigEndianMask());
        for (int i = 0; i <= size - 8; i += 8) {
            out.setLongLE(i, out.getLongLE(i) ^ mask);
        }
        return done(out);
    }

    @Benchmark
    public int oneLittleEndianPassByteBuf() {
        ByteBuf out = alloc.buffer(size);
        long mask = Long.reverseBytes(bigEndianMask());
        for (int i = 0; i <= size - 8; i += 8) {
            out.setLongLE(i, src.getLongLE(i) ^ mask);
        }
        out.writerIndex(size);
        return done(out);
    }

    private int onePass(ByteOrder order, long mask) {
        ByteBuf out = alloc.buffer(size);
        ByteBuffer dst = out.nioBuffer(0, size).order(order);
        ByteBuffer in = src.nioBuffer(0, size).order(order);
        for (int i = 0; i <= size - 8; i += 8) {
            dst.putLong(i, in.getLong(i) ^ mask);
        }
        out.writerIndex(size);
        return done(out);
    }

    private static int done(ByteBuf out) {
        int b = out.getByte(out.capacity() / 2);
        out.release();
        return b;
    }
}
