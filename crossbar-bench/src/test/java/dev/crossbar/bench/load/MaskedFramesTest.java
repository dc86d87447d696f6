package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket08FrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Netty's server-side decoder, masks required, must read our frames as the plain messages. */
class MaskedFramesTest {

    private static final int[] KEYS = {0, -1, 0x01020304, 0xA5C3F00F, 0x7FFFFFFF};

    @ParameterizedTest
    @ValueSource(ints = {3, 4, 7, 22, 23, 24, 25, 31, 125, 126, 4600, 65535, 65536, (1 << 20) + 3})
    void decodesToTheSameBytesAsTheUnmaskedMessage(int size) {
        MessageFormat format = new MessageFormat(size);
        ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
        for (int k = 0; k < KEYS.length; k++) {
            long seq = 1000 + k; // every body variant
            ByteBuf frame = MaskedFrames.encode(alloc, format, 7, seq, 123456789L, KEYS[k]);
            assertEquals(MaskedFrames.headerLength(size) + size, frame.readableBytes());
            ByteBuf expected = format.encode(alloc, 7, seq, 123456789L);
            EmbeddedChannel server = new EmbeddedChannel(new WebSocket08FrameDecoder(WebSocketDecoderConfig.newBuilder()
                    .expectMaskedFrames(true).maxFramePayloadLength(2 << 20).build()));
            try {
                assertTrue(server.writeInbound(frame), "decoder produced no frame");
                BinaryWebSocketFrame decoded = assertInstanceOf(BinaryWebSocketFrame.class, server.readInbound());
                try {
                    assertTrue(decoded.isFinalFragment());
                    assertTrue(ByteBufUtil.equals(expected, decoded.content()),
                            "size " + size + " key " + Integer.toHexString(KEYS[k]));
                } finally {
                    decoded.release();
                }
            } finally {
                expected.release();
                server.finishAndReleaseAll();
            }
        }
    }
}
