package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.relay.Member;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.session.RelaySession;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.websocket.ConnectionLifecycle;
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
 * receives nothing after the relay's close frame, though the stream goes on (also when the
 * frame waits behind the member's backlog), and the relay counts as sent only what was sent before
 * it; a client closed for a violation has nothing more relayed.
 */
class ClosingSessionIT {

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

    /** The close frame a member read, and how many data messages came before it. */
    private record Closed(RawClient.Frame frame, int messages) {
    }

    /** Reads through the close frame, returns it; then fails if any frame follows it. */
    private static Closed closeThenNothing(RawClient c) throws IOException {
        RawClient.Frame close = null;
        int before = 0;
        int messages = 0;
        while (close == null) {
            RawClient.Frame f = c.readFrame((int) WAIT.toMillis());
            assertNotNull(f, "no close frame after " + before + " frames");
            if (f.opcode() == 0x8) {
                close = f;
            } else {
                before++;
                messages += f.opcode() == 0x1 || f.opcode() == 0x2 ? 1 : 0;
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
                + " frames before it)");
        return new Closed(close, messages);
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
                RawClient.Frame close = closeThenNothing(member).frame();
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
                RawClient.Frame close = closeThenNothing(member).frame();
                assertEquals(1000, close.closeCode());
            } finally {
                stop.set(true);
                t.join(5_000);
            }
        }
    }

    /**
     * The close reply to a client's close is Netty's protocol handler's, written past the lifecycle;
     * deliveries are written past both (see RelaySession). Here the reply waits in the relay behind
     * what the member has not read yet, the stream goes on, and then the member reads: nothing may
     * follow the reply, and what the relay counts as sent to the member is what it received.
     */
    @Test
    void nothingFollowsACloseReplyWaitingBehindTheMembersBacklog() throws Exception {
        try (NettyClient sender = NettyClient.connect(relay.ws("/lab/busy"));
             RawClient member = new RawClient(relay.port(), 4096)) {
            assertTrue(member.upgrade("/lab/busy").startsWith("HTTP/1.1 101"));
            await("2 members", WAIT, () -> relay.server().connections() == 2);
            RelaySession watched = sessionOf(relay, member);
            RelaySession from = null;
            for (Member m : relay.server().topics().topics().iterator().next().members()) {
                from = m == watched ? from : (RelaySession) m;
            }
            // The member reads nothing yet: once the kernel's buffers are full its frames wait in
            // the relay, and the close reply will too. Up to half its bound (1 MiB, Netty's high-water
            // mark), so that what follows fits in the rest: nothing is dropped for being over it.
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (watched.channel().bytesBeforeUnwritable() > ServerConfig.DEFAULT_MAX_CLIENT_QUEUE_BYTES / 2) {
                assertTrue(System.nanoTime() < deadline, "no backlog for the member");
                burst(sender, from, 100);
            }
            member.send(RawClient.frame(0x88, new byte[] {0x03, (byte) 0xe8}, true));
            ConnectionLifecycle lifecycle = ConnectionLifecycle.of(watched.channel().pipeline());
            await("the relay answered the close", WAIT, () -> onLoop(watched, lifecycle::isClosing));
            burst(sender, from, 100); // the stream goes on after the answer
            Closed closed = closeThenNothing(member);
            assertEquals(1000, closed.frame().closeCode());
            await("the relay closed the member's socket", WAIT, () -> !watched.channel().isActive());
            assertEquals(closed.messages(), watched.stats().messagesOut(),
                    "messages counted out to the member vs. messages it received before the close reply");
            assertEquals(0, watched.stats().dropped(), "dropped for the bound: the case was not the one meant");
        }
    }

    /** Sends {@code messages} messages of 1,000 bytes at once, and waits for the relay to have read them all. */
    private static void burst(NettyClient sender, RelaySession from, int messages) {
        long target = from.stats().messagesIn() + messages;
        for (int i = 0; i < messages; i++) {
            sender.write(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(new byte[1000])));
        }
        sender.flush();
        await("the relay read the burst", WAIT, () -> from.stats().messagesIn() >= target);
    }

    /** The relay's session of {@code client}, found by the client's port. */
    private static RelaySession sessionOf(RelayServerExtension relay, RawClient client) {
        for (Member m : relay.server().topics().topics().iterator().next().members()) {
            if (((RelaySession) m).channel().remoteAddress().toString().endsWith(":" + client.socket.getLocalPort())) {
                return (RelaySession) m;
            }
        }
        throw new AssertionError("no session for the client's port " + client.socket.getLocalPort());
    }

    /** Asks on the channel's event loop, where the session's state lives. */
    private static boolean onLoop(RelaySession session, java.util.concurrent.Callable<Boolean> question) {
        try {
            return session.channel().eventLoop().submit(question).get(5, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("asking the session's event loop", e);
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
                RawClient.Frame close = closeThenNothing(member).frame();
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
                RelaySession watched = sessionOf(relay, member);
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
