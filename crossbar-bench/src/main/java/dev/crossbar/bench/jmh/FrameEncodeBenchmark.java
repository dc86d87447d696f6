package dev.crossbar.bench.jmh;

import dev.crossbar.core.relay.PreparedFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket08FrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Framing one server-to-client binary message: Crossbar's {@link PreparedFrame} (header buffer
 * plus the payload in a composite, built once per message and shared by every subscriber) against
 * Netty's {@link WebSocket08FrameEncoder}, which a conventional relay runs once per subscriber.
 */
@State(Scope.Benchmark)
public class FrameEncodeBenchmark extends AbstractBenchmark {

    @Param({"64", "4600", "1048576"})
    int payloadBytes;

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private final List<Object> out = new ArrayList<>(2);
    private ByteBuf payload;
    private ExposedEncoder encoder;
    private EmbeddedChannel channel;
    private ChannelHandlerContext ctx;

    @Setup(Level.Trial)
    public void setUp() {
        payload = alloc.directBuffer(payloadBytes);
        payload.writeZero(payloadBytes);
        encoder = new ExposedEncoder();
        channel = new EmbeddedChannel(encoder);
        ctx = channel.pipeline().context(encoder);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        payload.release();
        channel.finishAndReleaseAll();
    }

    @Benchmark
    public void preparedFrame(Blackhole bh) {
        PreparedFrame f = PreparedFrame.of(alloc, false, payload.retainedDuplicate());
        bh.consume(f.content());
        f.release();
    }

    @Benchmark
    public void nettyEncoder(Blackhole bh) throws Exception {
        BinaryWebSocketFrame frame = new BinaryWebSocketFrame(payload.retainedDuplicate());
        try {
            encoder.encodeFrame(ctx, frame, out);
        } finally {
            frame.release();
        }
        for (int i = 0; i < out.size(); i++) {
            Object o = out.get(i);
            bh.consume(o);
            ReferenceCountUtil.release(o);
        }
        out.clear();
    }

    /** Netty's server-side (unmasked) encoder with its {@code encode} step callable directly. */
    static final class ExposedEncoder extends WebSocket08FrameEncoder {
        ExposedEncoder() {
            super(false);
        }

        void encodeFrame(ChannelHandlerContext ctx, WebSocketFrame frame, List<Object> out) throws Exception {
            encode(ctx, frame, out);
        }
    }
}
