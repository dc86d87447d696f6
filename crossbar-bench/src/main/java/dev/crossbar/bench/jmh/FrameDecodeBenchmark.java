package dev.crossbar.bench.jmh;

import dev.crossbar.server.websocket.FrameDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket08FrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import java.util.Random;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One masked client frame decoded, as a socket read that holds it whole: the relay's
 * {@link FrameDecoder} (unmasks while it copies) against Netty's {@link WebSocket08FrameDecoder}
 * (copies, then unmasks the copy) with the relay's settings, on an {@link EmbeddedChannel} whose
 * allocator is the relay's default. Each operation feeds a retained duplicate of the same frame
 * (pooled, so the stand-in for the read allocates nothing), takes the decoded frame and releases
 * it; setup checks the payload comes out unmasked. Run as deployed: JMH's worker a
 * {@code FastThreadLocalThread} and the jar's {@code --add-opens} (Netty's own direct memory).
 */
@State(Scope.Thread)
@Fork(value = 1, jvmArgsPrepend = {"-Djmh.executor=CUSTOM",
        "-Djmh.executor.class=dev.crossbar.bench.jmh.FastThreadLocalExecutor",
        "--add-opens", "java.base/java.nio=ALL-UNNAMED", "-Dio.netty.tryReflectionSetAccessible=true"},
        jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Xms256m", "-Xmx256m",
                "-XX:MaxDirectMemorySize=256m"})
public class FrameDecodeBenchmark extends AbstractBenchmark {

    @Param({"64", "4600", "1048576"})
    int payloadBytes;

    @Param({"relay", "netty"})
    String decoder;

    private EmbeddedChannel channel;
    private ByteBuf wire;

    @Setup(Level.Trial)
    public void setUp() {
        ChannelHandler handler = decoder.equals("relay") ? new FrameDecoder(16 << 20)
                : new WebSocket08FrameDecoder(WebSocketDecoderConfig.newBuilder().maxFramePayloadLength(16 << 20)
                        .expectMaskedFrames(true).allowMaskMismatch(false).allowExtensions(false)
                        .closeOnProtocolViolation(false).build()); // as the relay configures it
        if (handler instanceof ByteToMessageDecoder d) {
            d.setCumulator(ByteToMessageDecoder.COMPOSITE_CUMULATOR); // as the relay runs both
        }
        channel = new EmbeddedChannel(handler);
        byte[] payload = new byte[payloadBytes];
        new Random(1).nextBytes(payload);
        int key = 0x5A3C_96E1;
        wire = PooledByteBufAllocator.DEFAULT.directBuffer(payloadBytes + 14);
        wire.writeByte(0x82);
        if (payloadBytes < 126) {
            wire.writeByte(0x80 | payloadBytes);
        } else if (payloadBytes <= 0xFFFF) {
            wire.writeByte(0x80 | 126).writeShort(payloadBytes);
        } else {
            wire.writeByte(0x80 | 127).writeLong(payloadBytes);
        }
        wire.writeInt(key);
        for (int i = 0; i < payloadBytes; i++) {
            wire.writeByte(payload[i] ^ (key >>> (24 - 8 * (i & 3))));
        }
        BinaryWebSocketFrame frame = decodeOne();
        try {
            byte[] got = new byte[payloadBytes];
            frame.content().getBytes(frame.content().readerIndex(), got);
            if (!java.util.Arrays.equals(payload, got)) {
                throw new IllegalStateException(decoder + " did not unmask the payload");
            }
        } finally {
            frame.release();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        channel.finishAndReleaseAll();
        wire.release();
    }

    private BinaryWebSocketFrame decodeOne() {
        channel.pipeline().fireChannelRead(wire.retainedDuplicate());
        return channel.readInbound();
    }

    @Benchmark
    public int decode() {
        BinaryWebSocketFrame frame = decodeOne();
        int n = frame.content().readableBytes();
        frame.release();
        return n;
    }
}
