package dev.crossbar.bench.jmh;

import dev.crossbar.core.video.GopBuffer;
import dev.crossbar.core.video.RandomAccessTracker;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Random;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What {@code start=keyframe} costs the publisher's loop per message: {@link RandomAccessTracker#feed}
 * alone and with {@link GopBuffer#add}, on real ffmpeg MPEG-TS (the core tests' {@code mpeg1-g60.ts}:
 * 6 s of MPEG-1 at 30 fps, a keyframe every 2 s, 198,340 bytes, replayed in a loop) cut into messages
 * of {@code messageBytes} as a camera sends them (1316 = 7 packets, as over UDP; 4096 and 32768 are
 * not multiples of 188, so packets straddle messages); against the same tracker on a stream that is
 * not MPEG-TS (random bytes: judged after 940 bytes, then skipped) and against nothing at all.
 *
 * <p>One operation is one message, so the cost of a gigabyte is {@code ns/op * 1e9 / messageBytes}
 * (e.g. 100 ns/op at 4096 B is 24 ms per GB).
 */
@State(Scope.Benchmark)
public class RandomAccessBenchmark extends AbstractBenchmark {

    static final String FIXTURE = "/dev/crossbar/core/video/mpeg1-g60.ts";

    @Param({"1316", "4096", "32768"})
    int messageBytes;

    private ByteBuf tsStream;
    private ByteBuf otherStream;
    private ByteBuf[] ts;
    private ByteBuf[] other;
    private int next;
    private RandomAccessTracker tracker;
    private GopBuffer gop;

    @Setup(Level.Trial)
    public void setUp() {
        byte[] file = fixture();
        tsStream = PooledByteBufAllocator.DEFAULT.directBuffer(file.length).writeBytes(file);
        byte[] noise = new byte[file.length];
        new Random(15).nextBytes(noise);
        otherStream = PooledByteBufAllocator.DEFAULT.directBuffer(noise.length).writeBytes(noise);
        ts = chunk(tsStream, messageBytes);
        other = chunk(otherStream, messageBytes);
        tracker = new RandomAccessTracker();
        gop = new GopBuffer(GopBuffer.DEFAULT_MAX_BYTES);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        gop.release();
        tsStream.release();
        otherStream.release();
    }

    /** The loop and the message, no inspection: what the relay does today. */
    @Benchmark
    public void nothing(Blackhole bh) {
        bh.consume(nextOf(ts));
    }

    @Benchmark
    public int trackerOnMpegTs() {
        return tracker.feed(nextOf(ts));
    }

    @Benchmark
    public void trackerAndGopOnMpegTs() {
        ByteBuf m = nextOf(ts);
        gop.add(m, tracker.feed(m));
    }

    @Benchmark
    public int trackerOnOtherStream() {
        return tracker.feed(nextOf(other));
    }

    @Benchmark
    public void trackerAndGopOnOtherStream() {
        ByteBuf m = nextOf(other);
        gop.add(m, tracker.feed(m));
    }

    private ByteBuf nextOf(ByteBuf[] messages) {
        ByteBuf m = messages[next];
        next = next + 1 == messages.length ? 0 : next + 1;
        return m;
    }

    /** Slices (no copies, no references) of {@code stream} in messages of {@code size} bytes. */
    static ByteBuf[] chunk(ByteBuf stream, int size) {
        int n = (stream.readableBytes() + size - 1) / size;
        ByteBuf[] out = new ByteBuf[n];
        for (int i = 0; i < n; i++) {
            int from = i * size;
            out[i] = stream.slice(from, Math.min(size, stream.readableBytes() - from));
        }
        return out;
    }

    static byte[] fixture() {
        try (InputStream in = RandomAccessBenchmark.class.getResourceAsStream(FIXTURE)) {
            if (in == null) {
                throw new IllegalStateException(FIXTURE + " is not on the classpath (crossbar-bench/pom.xml)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
