package dev.crossbar.server.websocket;

import static dev.crossbar.server.websocket.FrameDecoderTest.frame;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The reader with its lifecycle on an {@link EmbeddedChannel}: whole messages out, fragments joined
 * (and only then passed on), text checked as it comes, control frames and violations answered by the
 * lifecycle; what the lifecycle writes is read back as frame objects (there is no encoder here).
 * The whole pipeline, over real sockets, is {@code ControlFramesIT}, {@code FragmentationIT} and
 * {@code CloseFrameConformanceIT}; Autobahn's suite runs in {@code src/conformance}.
 */
class MessageReaderTest {

    private static final int MAX = 64;
    private static final int KEY = 0x1234_5678;

    private final CloseSeenLog seen = new CloseSeenLog();
    private final EmbeddedChannel ch = new EmbeddedChannel(new ConnectionLifecycle(2), seen);

    MessageReaderTest() {
        ch.pipeline().addFirst(new MessageReader(MAX));
    }

    @Test
    void aWholeMessagePassesAsItCame() {
        read(frame(0x82, bytes("abc"), KEY));
        BinaryWebSocketFrame m = ch.readInbound();
        assertEquals("abc", text(m));
        assertNull(ch.readInbound());
        assertNull(ch.readOutbound());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void fragmentsAreJoinedAndPassedOnOnlyWhole() {
        read(frame(0x02, bytes("ab"), KEY)); // binary, not final
        assertNull(ch.readInbound(), "nothing before the last fragment");
        read(frame(0x89, bytes("hi"), KEY)); // a ping between fragments is answered at once
        PongWebSocketFrame pong = ch.readOutbound();
        assertEquals("hi", text(pong));
        read(cat(frame(0x00, bytes("cd"), KEY), frame(0x80, bytes("ef"), KEY)));
        BinaryWebSocketFrame m = ch.readInbound();
        assertTrue(m.isFinalFragment());
        assertEquals("abcdef", text(m));
        assertNull(ch.readInbound());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void textSplitInsideACharacterIsWholeText() {
        byte[] euro = "x€".getBytes(StandardCharsets.UTF_8); // 78 e2 82 ac
        read(frame(0x01, new byte[] {euro[0], euro[1]}, KEY));
        read(frame(0x80, new byte[] {euro[2], euro[3]}, KEY));
        TextWebSocketFrame m = ch.readInbound();
        assertEquals("x€", m.text());
        m.release();
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void textThatIsNotUtf8IsClosedWith1007AtTheBadFragmentAndTheRestSkipped() {
        read(frame(0x01, bytes("ok"), KEY));
        read(frame(0x00, new byte[] {(byte) 0xC0, (byte) 0xAF}, KEY)); // an overlong '/'
        assertClosedWith(1007, "bytes are not UTF-8");
        read(frame(0x80, bytes("end"), KEY)); // the rest of the message: skipped
        read(frame(0x82, bytes("next"), KEY));
        assertNull(ch.readInbound(), "nothing after a violation");
        read(frame(0x88, new byte[] {0x03, (byte) 0xE8}, KEY)); // the client's answer: the socket closes
        assertNoFrameWritten();
        assertFalse(ch.isOpen());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void aWholeTextMessageThatIsNotUtf8IsClosedWith1007() {
        read(frame(0x81, new byte[] {'a', (byte) 0xED, (byte) 0xA0, (byte) 0x80}, KEY)); // a surrogate
        assertClosedWith(1007, "bytes are not UTF-8");
        assertNull(ch.readInbound());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void fragmentsPastTheMessageLimitAreClosedWith1009() {
        read(frame(0x02, new byte[40], KEY));
        read(frame(0x00, new byte[40], KEY)); // 80 bytes of a 64-byte limit
        assertClosedWith(1009, "message larger than 64 bytes (the relay's limit)");
        assertNull(ch.readInbound());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void theClientsCloseIsAnsweredWithItsCodeAndReasonThenTheSocketCloses() {
        read(frame(0x88, cat(new byte[] {0x0F, (byte) 0xA0}, bytes("bye")), KEY)); // 4000 "bye"
        CloseWebSocketFrame answer = ch.readOutbound();
        assertEquals(4000, answer.statusCode());
        assertEquals("bye", answer.reasonText());
        answer.release();
        assertFalse(ch.isOpen(), "closed once the answer went");
        assertEquals(List.of("4000 bye"), seen.events);
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void afterTheRelaysCloseTheClientsEndsTheHandshakeWithNoSecondCloseFrame() {
        ConnectionLifecycle.of(ch.pipeline()).close(WebSocketCloseStatus.POLICY_VIOLATION, "token expired");
        CloseWebSocketFrame ours = ch.readOutbound();
        assertEquals(1008, ours.statusCode());
        ours.release();
        read(frame(0x88, new byte[] {0x03, (byte) 0xE8}, KEY));
        assertNoFrameWritten();
        assertFalse(ch.isOpen());
        assertEquals(List.of("1008 token expired"), seen.events, "the first close frame either way, once");
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void aPongIsDroppedAndAPingAfterTheRelaysCloseIsNotAnswered() {
        read(frame(0x8A, bytes("p"), KEY));
        assertNull(ch.readInbound());
        assertNull(ch.readOutbound());
        ConnectionLifecycle.of(ch.pipeline()).close(WebSocketCloseStatus.NORMAL_CLOSURE, "done");
        ((WebSocketFrame) ch.readOutbound()).release();
        read(frame(0x89, bytes("late"), KEY));
        assertNull(ch.readOutbound());
        assertFalse(ch.finishAndReleaseAll());
    }

    private void assertClosedWith(int code, String reason) {
        CloseWebSocketFrame close = ch.readOutbound();
        assertEquals(code, close.statusCode());
        assertEquals(reason, close.reasonText());
        close.release();
        assertTrue(ch.isOpen(), "open until the client answers: it may still be sending");
    }

    /** Nothing but the empty write that closes the socket once what went before it has gone. */
    private void assertNoFrameWritten() {
        Object out;
        while ((out = ch.readOutbound()) != null) {
            boolean frame = out instanceof WebSocketFrame;
            io.netty.util.ReferenceCountUtil.release(out);
            assertFalse(frame, "no second close frame");
        }
    }

    private void read(byte[] wire) {
        ch.writeInbound(Unpooled.wrappedBuffer(wire));
    }

    private static String text(WebSocketFrame frame) {
        try {
            assertInstanceOf(WebSocketFrame.class, frame);
            return new String(ByteBufUtil.getBytes(frame.content()), StandardCharsets.UTF_8);
        } finally {
            frame.release();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] cat(byte[] a, byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(a);
        out.writeBytes(b);
        return out.toByteArray();
    }

    /** Records the {@link CloseSeen} events that reach the end of the pipeline. */
    private static final class CloseSeenLog extends io.netty.channel.ChannelInboundHandlerAdapter {
        final List<String> events = new ArrayList<>();

        @Override
        public void userEventTriggered(io.netty.channel.ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof CloseSeen s) {
                events.add(s.status().code() + " " + s.reason());
            }
            ctx.fireUserEventTriggered(evt);
        }
    }
}
