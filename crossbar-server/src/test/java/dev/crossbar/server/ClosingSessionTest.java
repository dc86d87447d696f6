package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.relay.Member;
import dev.crossbar.server.session.RelaySession;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A session that is closing refuses deliveries (house style 13b; RFC 6455 5.5.1: no data frame
 * after a close frame): a member of a busy topic that the relay closes, or that closes itself,
 * receives nothing after the relay's close frame, though the stream goes on, and the relay counts
 * as sent only what was sent before it; a client closed for a violation has nothing more relayed.
 */
class ClosingSessionTest {

    private static final int MAX_MESSAGE = 1024;
    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.maxMessageBytes(MAX_MESSAGE));

    /** Streams small messages to {@code /lab/busy} until stopped, about one a millisecond. */
    private static Thread stream(NettyClient sender, AtomicBoolean stop) {
        return stream(sender, stop, 1_000_000);
    }

    /** Streams small messages to {@code /lab/busy} until stopped, pausing {@code pauseNanos} between them. */
    private static Thread stream(NettyClient sender, AtomicBoolean stop, long pauseNanos) {
        Thread t = new Thread(() -> {
            while (!stop.get() && sender.channel.isActive()) {
                sender.write(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(new byte[100])));
                sender.flush();
                java.util.concurrent.locks.LockSupport.parkNanos(pauseNanos);
                if (Thread.currentThread().isInterrupted()) {
                    return;
                }
            }
        }, "busy-stream");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Reads through the close frame, returns it; then fails if any frame follows it. */
    private static RawClient.Frame closeThenNothing(RawClient c) throws IOException {
        RawClient.Frame close = null;
        int before = 0;
        while (close == null) {
            RawClient.Frame f = c.readFrame((int) WAIT.toMillis());
            assertNotNull(f, "no close frame after " + before + " messages");
            if (f.opcode() == 0x8) {
                close = f;
            } else {
                before++;
            }
        }
        StringBuilder after = new StringBuilder();
        try {
            long deadline = System.currentTimeMillis() + 3000;
            RawClient.Frame f;
            while (System.currentTimeMillis() < deadline && (f = c.readFrame(3000)) != null) {
                after.append(f.opcode() == 0x8 ? " close " + f.closeCode() : " opcode " + f.opcode());
            }
        } catch (IOException e) {
            // closed by the relay: fine
        }
        assertEquals("", after.toString(), "frames after the close frame " + close.closeCode() + " (" + before
                + " messages before it)");
        return close;
    }

    private RawClient busyMember() throws Exception {
        RawClient c = new RawClient(relay.port());
        assertTrue(c.upgrade("/lab/busy").startsWith("HTTP/1.1 101"));
        return c;
    }

    @Test
    void nothingFollowsTheRelaysCloseFrame() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        try (NettyClient sender = NettyClient.connect(relay.ws("/lab/busy")); RawClient member = busyMember()) {
            await("2 members", WAIT, () -> relay.server().connections() == 2);
            Thread t = stream(sender, stop);
            try {
                assertNotNull(member.readFrame((int) WAIT.toMillis()), "the stream reaches the member");
                member.send(RawClient.frame(0x82, new byte[MAX_MESSAGE + 1], true)); // too big: 1009
                RawClient.Frame close = closeThenNothing(member);
                assertEquals(1009, close.closeCode(), close.closeReason());
            } finally {
                stop.set(true);
                t.join(5_000);
            }
        }
    }

    @Test
    void nothingFollowsTheCloseReplyToAClientsClose() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        try (NettyClient sender = NettyClient.connect(relay.ws("/lab/busy")); RawClient member = busyMember()) {
            await("2 members", WAIT, () -> relay.server().connections() == 2);
            Thread t = stream(sender, stop);
            try {
                assertNotNull(member.readFrame((int) WAIT.toMillis()), "the stream reaches the member");
                member.send(RawClient.frame(0x88, new byte[] {0x03, (byte) 0xe8}, true));
                RawClient.Frame close = closeThenNothing(member);
                assertEquals(1000, close.closeCode());
            } finally {
                stop.set(true);
                t.join(5_000);
            }
        }
    }
    @Test
    void framesAfterAViolationAreNotRelayed() throws Exception {
        try (RawClient sender = busyMember(); RawClient receiver = busyMember()) {
            await("2 members", WAIT, () -> relay.server().connections() == 2);
            // One write: a fragmented text message whose second fragment is not UTF-8 (1007), then
            // more fragments that complete it. The relay has refused the message; none of it may be
            // relayed, least of all with the bad fragment left out.
            java.io.ByteArrayOutputStream frames = new java.io.ByteArrayOutputStream();
            frames.writeBytes(RawClient.frame(0x01, new byte[] {'a'}, true));
            frames.writeBytes(RawClient.frame(0x00, new byte[] {(byte) 0xac}, true));
            frames.writeBytes(RawClient.frame(0x00, new byte[] {'b'}, true));
            frames.writeBytes(RawClient.frame(0x80, new byte[] {'c'}, true));
            frames.writeBytes(RawClient.frame(0x81, "after".getBytes(java.nio.charset.StandardCharsets.UTF_8), true));
            sender.send(frames.toByteArray());
            RawClient.Frame close = sender.readUntilClose((int) WAIT.toMillis());
            assertNotNull(close, "no close frame for invalid UTF-8");
            assertEquals(1007, close.closeCode(), close.closeReason());
            RawClient.Frame relayed = receiver.readFrame(1000);
            assertEquals(null, relayed, () -> "relayed from a client closed for invalid UTF-8: "
                    + new String(relayed.payload(), java.nio.charset.StandardCharsets.ISO_8859_1));
        }
    }
    @Test
    void nothingFollowsTheShutdownClose() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        try (NettyClient sender = NettyClient.connect(relay.ws("/lab/busy")); RawClient member = busyMember()) {
            await("2 members", WAIT, () -> relay.server().connections() == 2);
            Thread t = stream(sender, stop);
            Thread closer = new Thread(relay.server()::close, "shutdown");
            try {
                assertNotNull(member.readFrame((int) WAIT.toMillis()), "the stream reaches the member");
                closer.start(); // the stream goes on while the relay shuts down
                RawClient.Frame close = closeThenNothing(member);
                assertEquals(1001, close.closeCode());
            } finally {
                stop.set(true);
                t.join(5_000);
                closer.join(15_000);
            }
        }
    }
    /** A close the relay decides on its own (idle timeout), with the channel open until the close handshake ends. */
    @Nested
    class IdleClose {

        @RegisterExtension
        final RelayServerExtension relay = new RelayServerExtension(b -> b
                .pingInterval(Duration.ofMillis(300)).idleTimeout(Duration.ofSeconds(1)));

        @Test
        void deliveriesStopAtTheCloseFrame() throws Exception {
            AtomicBoolean stop = new AtomicBoolean();
            try (NettyClient sender = NettyClient.connect(relay.ws("/lab/busy"));
                 RawClient member = new RawClient(relay.port())) {
                assertTrue(member.upgrade("/lab/busy").startsWith("HTTP/1.1 101"));
                await("2 members", WAIT, () -> relay.server().connections() == 2);
                RelaySession session = null;
                for (Member m : relay.server().topics().topics().iterator().next().members()) {
                    if (((RelaySession) m).channel().remoteAddress().toString().endsWith(":" + member.socket.getLocalPort())) {
                        session = (RelaySession) m;
                    }
                }
                assertNotNull(session, "found the member's session");
                RelaySession watched = session;
                // Densely, so deliveries keep arriving while the close frame is on its way.
                Thread t = stream(sender, stop, 100_000);
                try {
                    // The member reads everything but never answers a ping: the relay closes it (1001).
                    int delivered = 0;
                    RawClient.Frame close = null;
                    while (close == null) {
                        RawClient.Frame f = member.readFrame((int) WAIT.toMillis());
                        assertNotNull(f, "no close frame after " + delivered + " messages");
                        if (f.opcode() == 0x8) {
                            close = f;
                        } else if (f.opcode() == 0x2) {
                            delivered++;
                        }
                    }
                    assertEquals(1001, close.closeCode(), close.closeReason());
                    StringBuilder after = new StringBuilder();
                    try {
                        RawClient.Frame f;
                        while ((f = member.readFrame(5000)) != null) {
                            after.append(" opcode ").append(f.opcode());
                        }
                    } catch (IOException e) {
                        // closed by the relay: fine
                    }
                    assertEquals("", after.toString(), "frames after the close frame");
                    await("the relay closed the member's socket", WAIT, () -> !watched.channel().isActive());
                    // What the session counted as sent is what the member received: no delivery was
                    // accepted (and counted) once the close frame had been sent.
                    assertEquals(delivered, watched.stats().messagesOut(),
                            "messages counted out to the member vs. messages it received before the close frame");
                } finally {
                    stop.set(true);
                    t.join(5_000);
                }
            }
        }
    }
}
