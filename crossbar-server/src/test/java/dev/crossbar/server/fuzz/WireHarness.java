package dev.crossbar.server.fuzz;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.topic.Router;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.http.HandshakeFailures;
import dev.crossbar.server.http.HealthEndpoint;
import dev.crossbar.server.transport.ConnectionLimiter;
import dev.crossbar.server.transport.CrossbarInitializer;
import dev.crossbar.server.websocket.FrameDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Runs raw client bytes through the real pipeline on {@link EmbeddedChannel}s: fast enough for
 * coverage-guided fuzzing, and the same handlers a socket gets. A second, well-behaved member on
 * the same topic receives whatever is relayed, so fan-out is exercised too.
 */
final class WireHarness {

    static final String UPGRADE = "GET /fuzz HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

    private static final ServerConfig CONFIG = ServerConfig.builder()
            .maxMessageBytes(64 * 1024).maxClientQueueBytes(64 * 1024).build();

    private WireHarness() {
    }

    /**
     * Feeds {@code bytes} (after an upgrade if {@code upgradeFirst}); asserts nothing is left behind,
     * and that what the relay sent both clients is what {@link WireModel} predicts: the peer
     * receives exactly the fuzzed client's whole messages (byte-exact, same type, one frame each),
     * pings are answered with their payload, and a violation is closed with its documented code.
     */
    static void run(byte[] bytes, boolean upgradeFirst) {
        TopicRegistry topics = new TopicRegistry(16);
        Router router = new Router(topics, 1024 * 1024);
        CrossbarInitializer init = new CrossbarInitializer(CONFIG, router,
                new DefaultChannelGroup(ImmediateEventExecutor.INSTANCE), Map.of(HealthEndpoint.PATH, HealthEndpoint.INSTANCE),
                new ConnectionLimiter(100, 100), new HandshakeFailures(), null, null, java.util.List.of(),
                new dev.crossbar.server.pair.SessionRegistry(CONFIG.sessions()), new dev.crossbar.server.http.Draining());
        EmbeddedChannel peer = new EmbeddedChannel(init);
        EmbeddedChannel fuzzed = new EmbeddedChannel(init);
        ByteArrayOutputStream toPeer = new ByteArrayOutputStream();
        ByteArrayOutputStream toFuzzed = new ByteArrayOutputStream();
        try {
            peer.writeInbound(Unpooled.copiedBuffer(UPGRADE, StandardCharsets.US_ASCII));
            assertInstanceOf(FrameDecoder.class, peer.pipeline().get(WebSocketFrameDecoder.class),
                    "the relay's frame decoder in place of Netty's after the upgrade");
            if (upgradeFirst) {
                fuzzed.writeInbound(Unpooled.copiedBuffer(UPGRADE, StandardCharsets.US_ASCII));
            }
            // In two pieces, so decoders see a message split across reads.
            int cut = bytes.length / 2;
            fuzzed.writeInbound(Unpooled.wrappedBuffer(bytes, 0, cut));
            if (fuzzed.isOpen()) { // the first half may already have been refused
                fuzzed.writeInbound(Unpooled.wrappedBuffer(bytes, cut, bytes.length - cut));
            }
            for (int i = 0; i < 3; i++) {
                fuzzed.runPendingTasks();
                peer.runPendingTasks();
            }
            written(fuzzed, toFuzzed);
            written(peer, toPeer);
        } finally {
            drainAndClose(fuzzed);
            drainAndClose(peer);
        }
        assertEquals(0, topics.size(), "a topic outlived its members");
        assertEquals(0, router.backlogBytes(), "fan-out backlog not drained");
        if (upgradeFirst) {
            checkAgainstModel(bytes, toFuzzed.toByteArray(), toPeer.toByteArray());
        } else {
            checkBeforeUpgrade(toFuzzed.toByteArray(), toPeer.toByteArray());
        }
    }

    /** A frame as the relay wrote it. */
    private record ServerFrame(boolean fin, int opcode, byte[] payload) {
        int closeCode() {
            return payload.length >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : -1;
        }
    }

    private static void checkAgainstModel(byte[] bytes, byte[] toFuzzed, byte[] toPeer) {
        WireModel model = WireModel.of(bytes, 0, CONFIG.maxMessageBytes());
        String context = " (model stopped at: " + model.stoppedAt + ", close " + model.closeCode + ")";

        List<WireModel.Message> relayed = new ArrayList<>();
        for (ServerFrame f : frames(afterSwitchingProtocols(toPeer, "peer"), "peer")) {
            assertTrue(f.fin() && (f.opcode() == 0x1 || f.opcode() == 0x2),
                    "the peer got a frame other than one whole data message: opcode " + f.opcode() + context);
            relayed.add(new WireModel.Message(f.opcode() == 0x1, f.payload()));
        }
        assertEquals(model.messages, relayed, "relayed messages differ from the client's messages" + context);
        for (int i = 0; i < relayed.size(); i++) {
            assertArrayEquals(model.messages.get(i).data(), relayed.get(i).data(), "message " + i + " not byte-exact");
        }

        List<byte[]> pongs = new ArrayList<>();
        ServerFrame close = null;
        for (ServerFrame f : frames(afterSwitchingProtocols(toFuzzed, "fuzzed client"), "fuzzed client")) {
            if (close != null) {
                break; // what follows a close frame is the concern of ClosingSessionIT
            }
            if (f.opcode() == 0xA) {
                pongs.add(f.payload());
            } else if (f.opcode() == 0x8) {
                close = f;
            } else {
                throw new AssertionError("the fuzzed client (alone on its side of the topic) got opcode " + f.opcode() + context);
            }
        }
        assertTrue(pongs.size() <= model.pings.size(), "more pongs than pings" + context);
        for (int i = 0; i < pongs.size(); i++) {
            assertArrayEquals(model.pings.get(i), pongs.get(i), "pong " + i + " does not carry its ping's payload" + context);
        }
        if (model.closeCode != 0) {
            assertNotNull(close, "no close frame for a violation" + context);
            assertEquals(model.closeCode, close.closeCode(), "close code" + context);
        } else if (!model.stoppedAt.equals("client close frame")) {
            assertNull(close, "closed with " + (close == null ? 0 : close.closeCode()) + " without a violation" + context);
        }
    }

    /** Before an upgrade: every response starts with a status line, and nothing is relayed without one. */
    private static void checkBeforeUpgrade(byte[] toFuzzed, byte[] toPeer) {
        String out = new String(toFuzzed, StandardCharsets.ISO_8859_1);
        if (!out.isEmpty()) {
            assertTrue(out.matches("(?s)HTTP/1\\.1 [1-5][0-9][0-9] .*"), "not an HTTP response: " + abbreviate(out));
        }
        List<ServerFrame> relayed = frames(afterSwitchingProtocols(toPeer, "peer"), "peer");
        if (!out.contains("HTTP/1.1 101 ")) {
            assertTrue(relayed.isEmpty(), "a client that never upgraded had " + relayed.size() + " frames relayed");
        }
        for (ServerFrame f : relayed) {
            assertTrue(f.fin() && (f.opcode() == 0x1 || f.opcode() == 0x2), "the peer got opcode " + f.opcode());
        }
    }

    private static String abbreviate(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    /** What follows the 101 response head. */
    private static byte[] afterSwitchingProtocols(byte[] out, String who) {
        String text = new String(out, StandardCharsets.ISO_8859_1);
        assertTrue(text.startsWith("HTTP/1.1 101 "), who + " was not upgraded: " + abbreviate(text));
        int end = text.indexOf("\r\n\r\n");
        assertTrue(end > 0, who + ": incomplete response head");
        return Arrays.copyOfRange(out, end + 4, out.length);
    }

    /** Parses server frames: unmasked, minimally encoded lengths, nothing left over. */
    private static List<ServerFrame> frames(byte[] b, String who) {
        List<ServerFrame> out = new ArrayList<>();
        int p = 0;
        while (p < b.length) {
            assertTrue(b.length - p >= 2, who + ": a partial frame header");
            int b0 = b[p] & 0xff;
            int b1 = b[p + 1] & 0xff;
            assertEquals(0, b0 & 0x70, who + ": reserved bits set in a server frame");
            assertEquals(0, b1 & 0x80, who + ": a masked server frame");
            p += 2;
            long len = b1 & 0x7f;
            if (len == 126) {
                len = ((b[p] & 0xff) << 8) | (b[p + 1] & 0xff);
                p += 2;
            } else if (len == 127) {
                len = 0;
                for (int i = 0; i < 8; i++) {
                    len = (len << 8) | (b[p + i] & 0xff);
                }
                p += 8;
            }
            assertTrue(len <= b.length - p, who + ": a partial frame");
            out.add(new ServerFrame((b0 & 0x80) != 0, b0 & 0x0f, Arrays.copyOfRange(b, p, p + (int) len)));
            p += (int) len;
        }
        return out;
    }

    /** Moves what the relay wrote to {@code ch} into {@code out}, releasing each buffer. */
    private static void written(EmbeddedChannel ch, ByteArrayOutputStream out) {
        Object o;
        while ((o = ch.readOutbound()) != null) {
            try {
                ByteBuf b = o instanceof ByteBuf buf ? buf : o instanceof ByteBufHolder h ? h.content() : null;
                if (b == null) {
                    throw new AssertionError("the relay wrote a " + o.getClass().getName() + ", not bytes");
                }
                out.writeBytes(ByteBufUtil.getBytes(b));
            } finally {
                ReferenceCountUtil.release(o);
            }
        }
    }

    private static void drainAndClose(EmbeddedChannel ch) {
        ch.close();
        ch.runPendingTasks();
        Object o;
        while ((o = ch.readOutbound()) != null) {
            ReferenceCountUtil.release(o);
        }
        while ((o = ch.readInbound()) != null) {
            ReferenceCountUtil.release(o);
        }
        ch.finishAndReleaseAll();
    }
}
