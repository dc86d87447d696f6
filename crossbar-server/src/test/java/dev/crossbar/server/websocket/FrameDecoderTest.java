package dev.crossbar.server.websocket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.relay.PreparedFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.WebSocket08FrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The relay's frame decoder on its own: payloads come out unmasked, byte for byte, however the
 * socket splits the frames; and on random streams of valid and invalid frames it decodes, fails
 * and skips exactly as Netty's {@link WebSocket08FrameDecoder} does with the relay's settings
 * (answering a violation is the connection's lifecycle's, through {@link MessageReader}).
 */
class FrameDecoderTest {

    private static final int MAX = 1 << 20;

    @Test
    void unmasksEveryLengthHoweverTheReadsSplitIt() {
        Random random = new Random(42);
        int[] lengths = {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 125, 126, 127, 1023, 1024, 1025, 1031, 4600, 65535,
            65536, 65537, MAX}; // both sides of UnmaskingCopy.ONE_PASS_FROM_BYTES
        for (int length : lengths) {
            for (int split : new int[] {0, 1, 3, 7, 1000, 65536}) {
                byte[] payload = new byte[length];
                random.nextBytes(payload);
                int key = random.nextInt();
                byte[] wire = frame(0x82, payload, key);
                EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(MAX));
                if (split == 0 || (split < 1000 && length > 5000)) { // many tiny reads of a big frame: slow, and no new case
                    // One read: a direct one for odd lengths (copied between addresses), else heap.
                    ch.writeInbound(length % 2 == 1 ? Unpooled.directBuffer(wire.length).writeBytes(wire)
                            : Unpooled.wrappedBuffer(wire));
                } else {
                    for (int at = 0; at < wire.length; at += split) { // reads of split bytes, the last shorter
                        int n = Math.min(split, wire.length - at);
                        // Direct reads, as the socket gives, and heap ones (any buffer must do).
                        ByteBuf read = split % 2 == 1 ? Unpooled.directBuffer(n) : Unpooled.buffer(n);
                        ch.writeInbound(read.writeBytes(wire, at, n));
                    }
                }
                BinaryWebSocketFrame frame = ch.readInbound();
                try {
                    assertTrue(frame.isFinalFragment());
                    assertArrayEquals(payload, ByteBufUtil.getBytes(frame.content()),
                            length + " bytes in reads of " + split);
                } finally {
                    frame.release();
                }
                assertNull(ch.readInbound());
                assertFalse(ch.finish());
            }
        }
    }

    /**
     * A message in one frame below the contiguous limit is read behind its outgoing header, so the
     * relay frames it without a second buffer; fragments, control frames and larger payloads are not.
     */
    @Test
    void aWholeSmallMessageIsReadReadyToRelay() {
        Random random = new Random(5);
        int[][] cases = { // first byte, length, whether it is framed in place
            {0x82, 100, 1}, {0x81, 300, 1}, {0x82, PreparedFrame.CONTIGUOUS_LIMIT - 1, 1},
            {0x82, PreparedFrame.CONTIGUOUS_LIMIT, 0}, {0x02, 100, 0}, {0x89, 100, 0}};
        for (int[] c : cases) {
            byte[] payload = new byte[c[1]];
            for (int i = 0; i < payload.length; i++) {
                payload[i] = (byte) ('a' + random.nextInt(26)); // valid text too
            }
            EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(MAX));
            ch.writeInbound(Unpooled.wrappedBuffer(frame(c[0], payload, random.nextInt())));
            WebSocketFrame frame = ch.readInbound();
            boolean text = (c[0] & 0x0F) == 1;
            ByteBuf content = frame.content().retain(); // the frame's reference passes on, as the relay's does
            frame.release();
            assertArrayEquals(payload, ByteBufUtil.getBytes(content));
            PreparedFrame prepared = PreparedFrame.of(content.alloc(), text, content, 0L);
            try {
                assertEquals(c[2] == 1, prepared.content() == content, String.format("0x%x, %d bytes", c[0], c[1]));
            } finally {
                prepared.release();
            }
            assertEquals(0, content.refCnt());
            ch.finishAndReleaseAll();
        }
    }

    /**
     * A payload that arrives in pieces is taken as it comes: no read is held while the rest is
     * awaited (the reads are released), so a client sending a large frame a byte at a time costs
     * what it sent, not a read buffer per byte.
     */
    @Test
    void aPayloadInPiecesHoldsNoSocketRead() {
        Random random = new Random(3);
        for (int[] c : new int[][] {{10_000, 1}, {300_000, 1000}, {300_000, 65536}}) {
            int length = c[0];
            int piece = c[1];
            byte[] payload = new byte[length];
            random.nextBytes(payload);
            byte[] wire = frame(0x82, payload, random.nextInt());
            EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(MAX));
            int headerLength = wire.length - length;
            ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, headerLength));
            for (int at = headerLength; at < wire.length; at += piece) {
                int n = Math.min(piece, wire.length - at);
                ByteBuf read = Unpooled.directBuffer(n).writeBytes(wire, at, n);
                ch.writeInbound(read);
                assertEquals(0, read.refCnt(), "a read of " + piece + " bytes was held");
            }
            WebSocketFrame frame = ch.readInbound();
            try {
                assertArrayEquals(payload, ByteBufUtil.getBytes(frame.content()), length + " bytes in pieces of " + piece);
            } finally {
                frame.release();
            }
            assertFalse(ch.finish());
        }
    }

    @Test
    void aPayloadCutOffByTheConnectionEndingIsReleased() {
        byte[] payload = new byte[200_000];
        byte[] wire = frame(0x82, payload, 0x0102_0304);
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(MAX));
        ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, 150_000)); // chunks gathered, the frame not done
        assertNull(ch.readInbound());
        assertFalse(ch.finishAndReleaseAll()); // paranoid leak detection reports the chunks if they were kept
    }

    /**
     * Refused with 1009 before the mask key arrives; what follows is skipped. The decoder writes
     * nothing and leaves the channel open: answering and closing are the pipeline's
     * (the lifecycle's, through {@link MessageReader}), which must not close while the client is still sending.
     */
    @Test
    void aFrameOverTheLimitIsRefusedWith1009AndTheRestSkipped() {
        FrameDecoder decoder = new FrameDecoder(1000);
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        ByteBuf header = Unpooled.wrappedBuffer(new byte[] {(byte) 0x82, (byte) (0x80 | 126), 0x03, (byte) 0xE9});
        CorruptedWebSocketFrameException e = assertThrows(CorruptedWebSocketFrameException.class,
                () -> ch.writeInbound(header)); // 1001 bytes announced
        assertEquals(1009, e.closeStatus().code());
        assertEquals("Max frame length of 1000 has been exceeded.", e.getMessage());
        assertFalse(decoder.closeReceived(), "answered with a close frame");
        ch.writeInbound(Unpooled.wrappedBuffer(frame(0x82, new byte[10], 1))); // after it: skipped
        assertNull(ch.readInbound());
        assertNull(ch.readOutbound());
        assertTrue(ch.isActive());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void aCloseReasonThatEndsInsideAUtf8SequenceIsRefusedWith1007AfterTheClientsClose() {
        FrameDecoder decoder = new FrameDecoder(MAX);
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        byte[] close = frame(0x88, new byte[] {0x03, (byte) 0xE8, 'o', 'k', (byte) 0xE2, (byte) 0x82}, 0x1234_5678);
        CorruptedWebSocketFrameException e = assertThrows(CorruptedWebSocketFrameException.class,
                () -> ch.writeInbound(Unpooled.wrappedBuffer(close)));
        assertEquals(1007, e.closeStatus().code());
        assertTrue(decoder.closeReceived(), "answered without a close frame of ours");
        assertNull(ch.readInbound());
        assertNull(ch.readOutbound());
        assertFalse(ch.finishAndReleaseAll());
    }

    /**
     * After a violation in a header, frames are skipped whole, reading their headers only, so that
     * the client's close frame (its answer to the relay's) is noticed however the reads split
     * the stream; it is passed up empty, and nothing else is.
     */
    @Test
    void afterAViolationOnlyTheClientsCloseFrameIsPassedUp() {
        Random random = new Random(11);
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        byte[] oversized = new byte[70_000];
        wire.writeBytes(frame(0x82, oversized, random.nextInt())); // over the limit: 1009
        wire.writeBytes(frame(0x01, new byte[300], random.nextInt())); // skipped: text, not final
        wire.writeBytes(frame(0x89, new byte[5], random.nextInt())); // skipped: a ping
        wire.writeBytes(frame(0x88, new byte[] {0x03, (byte) 0xE8}, random.nextInt())); // the client's close
        wire.writeBytes(frame(0x82, new byte[10], random.nextInt())); // after it: nothing is read
        byte[] bytes = wire.toByteArray();
        for (int split : new int[] {1, 2, 7, 300, 4096, bytes.length}) {
            FrameDecoder decoder = new FrameDecoder(1000);
            EmbeddedChannel ch = new EmbeddedChannel(decoder);
            int errors = 0;
            boolean closedAtTheError = false;
            for (int at = 0; at < bytes.length; at += split) {
                try {
                    ch.writeInbound(Unpooled.wrappedBuffer(bytes, at, Math.min(split, bytes.length - at)));
                } catch (CorruptedWebSocketFrameException e) {
                    assertEquals(1009, e.closeStatus().code());
                    closedAtTheError = decoder.closeReceived(); // in the same read: known at once
                    errors++;
                }
            }
            assertEquals(1, errors, "reads of " + split);
            assertTrue(decoder.closeReceived(), "reads of " + split);
            assertEquals(split == bytes.length, closedAtTheError, "reads of " + split);
            assertFalse(decoder.invalidCloseFrame());
            if (!closedAtTheError) { // read later: passed up
                CloseWebSocketFrame close = ch.readInbound();
                assertEquals(0, close.content().readableBytes(), "reads of " + split);
                close.release();
            }
            assertNull(ch.readInbound(), "reads of " + split);
            assertNull(ch.readOutbound());
            assertFalse(ch.finishAndReleaseAll());
        }
    }

    /** A malformed close frame's header is the client's close: it will send nothing more. */
    @Test
    void aMalformedCloseFrameIsTheClientsClose() {
        FrameDecoder decoder = new FrameDecoder(MAX);
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        byte[] close = frame(0x88, new byte[] {0x03}, 0x0102_0304); // a one-byte body
        CorruptedWebSocketFrameException e = assertThrows(CorruptedWebSocketFrameException.class,
                () -> ch.writeInbound(Unpooled.wrappedBuffer(close)));
        assertEquals(1002, e.closeStatus().code());
        assertTrue(decoder.closeReceived());
        assertFalse(decoder.invalidCloseFrame(), "answered with a close frame");
        assertNull(ch.readInbound());
        assertFalse(ch.finishAndReleaseAll());
    }

    /** A length no frame can be skipped past (negative) ends the skipping: nothing after it is read. */
    @Test
    void aNegativeLengthEndsTheSkipping() {
        FrameDecoder decoder = new FrameDecoder(MAX);
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        ByteBuf wire = Unpooled.buffer().writeByte(0x82).writeByte(0x80 | 127).writeLong(-5).writeInt(0)
                .writeBytes(frame(0x88, new byte[0], 1));
        CorruptedWebSocketFrameException e = assertThrows(CorruptedWebSocketFrameException.class,
                () -> ch.writeInbound(wire));
        assertEquals(1002, e.closeStatus().code());
        assertFalse(decoder.closeReceived(), "the close frame after it is not looked for");
        assertNull(ch.readInbound());
        assertFalse(ch.finishAndReleaseAll());
    }

    /** Random streams of frames, valid and not, split at random, through both decoders. */
    @Test
    void decodesClosesAndFailsAsNettysDecoderDoes() {
        Random random = new Random(7);
        for (int stream = 0; stream < 3000; stream++) {
            byte[] wire = randomStream(random);
            List<Integer> splits = new ArrayList<>();
            for (int at = 0; at < wire.length; ) {
                int n = 1 + random.nextInt(random.nextBoolean() ? 4 : 300);
                splits.add(Math.min(n, wire.length - at));
                at += n;
            }
            WebSocketDecoderConfig config = WebSocketDecoderConfig.newBuilder().maxFramePayloadLength(200)
                    .expectMaskedFrames(true).allowMaskMismatch(false).allowExtensions(false)
                    .closeOnProtocolViolation(false).build();
            String netty = run(new EmbeddedChannel(new WebSocket08FrameDecoder(config)), wire, splits);
            String ours = run(new EmbeddedChannel(new FrameDecoder(200)), wire, splits);
            // The one difference: after a violation ours passes up the client's close frame, if one follows.
            assertEquals(netty, ours, "stream " + stream + ": " + ByteBufUtil.hexDump(wire));
        }
    }

    /** What a decoder did with the stream: frames passed on, what it wrote, the error, whether the channel is open. */
    private static String run(EmbeddedChannel ch, byte[] wire, List<Integer> splits) {
        StringBuilder log = new StringBuilder();
        boolean failed = false;
        int at = 0;
        for (int n : splits) {
            if (!ch.isOpen()) {
                break;
            }
            try {
                ch.writeInbound(Unpooled.copiedBuffer(wire, at, n));
            } catch (CorruptedWebSocketFrameException e) {
                log.append("error ").append(e.closeStatus().code()).append(' ').append(e.getMessage()).append('\n');
                failed = true;
            }
            at += n;
            for (Object in; (in = ch.readInbound()) != null; ) {
                WebSocketFrame f = (WebSocketFrame) in;
                if (failed && f instanceof CloseWebSocketFrame && !f.content().isReadable()
                        && ch.pipeline().first() instanceof FrameDecoder decoder && decoder.closeReceived()) {
                    f.release(); // (see the caller)
                    continue;
                }
                log.append(f.getClass().getSimpleName()).append(f.isFinalFragment() ? " fin " : " more ")
                        .append(f.rsv()).append(' ').append(ByteBufUtil.hexDump(f.content())).append('\n');
                f.release();
            }
            for (Object out; (out = ch.readOutbound()) != null; ) {
                if (out instanceof CloseWebSocketFrame close) {
                    log.append("sent close ").append(close.statusCode()).append(' ').append(close.reasonText()).append('\n');
                } else {
                    log.append("sent ").append(ByteBufUtil.hexDump((ByteBuf) out)).append('\n');
                }
                ReferenceCountUtil.release(out);
            }
        }
        log.append(ch.isActive() ? "open" : "closed");
        ch.finishAndReleaseAll();
        return log.toString();
    }

    /** A few frames, mostly valid; each header bit pattern that a decoder must refuse turns up now and then. */
    private static byte[] randomStream(Random random) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int frames = 1 + random.nextInt(6);
        for (int i = 0; i < frames; i++) {
            int opcode = switch (random.nextInt(10)) {
                case 0 -> 0x0;
                case 1 -> 0x1;
                case 2 -> 0x8;
                case 3 -> 0x9;
                case 4 -> 0xA;
                case 5 -> random.nextInt(16); // reserved ones too
                default -> 0x2;
            };
            boolean fin = random.nextInt(4) != 0;
            int rsv = random.nextInt(30) == 0 ? 1 + random.nextInt(7) : 0;
            int length = switch (random.nextInt(8)) {
                case 0 -> random.nextInt(2);
                case 1 -> 126 + random.nextInt(200);
                default -> random.nextInt(130);
            };
            byte[] payload = new byte[length];
            random.nextBytes(payload);
            if (opcode == 0x8 && length >= 2 && random.nextBoolean()) { // a close body: a code, maybe valid
                int code = random.nextBoolean() ? 1000 + random.nextInt(12) : random.nextInt(70000);
                payload[0] = (byte) (code >> 8);
                payload[1] = (byte) code;
                // A reason in letters, now and then a random byte, never last: a reason that ends inside a
                // UTF-8 sequence is the one difference (Netty's check lets it pass; 1007 here, tested above).
                for (int j = 2; j < length; j++) {
                    payload[j] = j < length - 1 && random.nextInt(20) == 0 ? payload[j] : (byte) ('a' + random.nextInt(26));
                }
            }
            if (opcode == 0x8 && length >= 3) {
                payload[length - 1] = 'z'; // (see above)
            }
            boolean masked = random.nextInt(40) != 0;
            int b0 = (fin ? 0x80 : 0) | rsv << 4 | opcode;
            out.writeBytes(masked ? frame(b0, payload, random.nextInt()) : unmasked(b0, payload, random));
        }
        return out.toByteArray();
    }

    /** A client frame: first byte {@code b0}, masked with {@code key}, its length in the shortest form. */
    static byte[] frame(int b0, byte[] payload, int key) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(b0);
        writeLength(out, 0x80, payload.length, false);
        byte[] k = {(byte) (key >> 24), (byte) (key >> 16), (byte) (key >> 8), (byte) key};
        out.writeBytes(k);
        for (int i = 0; i < payload.length; i++) {
            out.write(payload[i] ^ k[i & 3]);
        }
        return out.toByteArray();
    }

    /** An unmasked frame, its length sometimes in a longer form than needed (both are violations). */
    private static byte[] unmasked(int b0, byte[] payload, Random random) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(b0);
        writeLength(out, 0, payload.length, random.nextBoolean());
        out.writeBytes(payload);
        return out.toByteArray();
    }

    private static void writeLength(ByteArrayOutputStream out, int maskBit, int length, boolean longForm) {
        if (length < 126 && !longForm) {
            out.write(maskBit | length);
        } else if (length <= 0xFFFF) {
            out.write(maskBit | 126);
            out.write(length >> 8);
            out.write(length);
        } else {
            out.write(maskBit | 127);
            for (int shift = 56; shift >= 0; shift -= 8) {
                out.write((int) ((long) length >> shift));
            }
        }
    }

    @Test
    void theTestsFrameHelperMasksAsRfc6455Says() {
        // RFC 6455 section 5.7: a masked "Hello" from a client.
        byte[] hello = frame(0x81, "Hello".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0x37fa213d);
        assertArrayEquals(new byte[] {(byte) 0x81, (byte) 0x85, 0x37, (byte) 0xfa, 0x21, 0x3d, 0x7f, (byte) 0x9f,
                0x4d, 0x51, 0x58}, hello);
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(MAX));
        ch.writeInbound(Unpooled.wrappedBuffer(hello));
        WebSocketFrame text = ch.readInbound();
        try {
            assertInstanceOf(io.netty.handler.codec.http.websocketx.TextWebSocketFrame.class, text);
            assertEquals("Hello", text.content().toString(java.nio.charset.StandardCharsets.US_ASCII));
        } finally {
            text.release();
        }
        assertFalse(ch.finish());
    }
}
