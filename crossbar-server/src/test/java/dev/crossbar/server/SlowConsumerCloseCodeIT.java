package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.crossbar.core.relay.Member;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.server.config.SlowConsumerPolicy;
import dev.crossbar.server.session.RelaySession;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Under {@code --slow-consumer disconnect} a receiver that keeps dropping past the grace is closed
 * with 1013 (docs/protocol.md, Slow receivers). A client that does not read cannot read a close
 * frame either, so this one stops reading, lets the relay decide while the stream goes on, then
 * resumes: behind the backlog it must find whole messages in order, then the close frame 1013, and
 * nothing after it. With the default queue the backlog outgrows the kernel's socket buffers, so the
 * close frame waits in the relay: it must still be delivered, not lost when the socket is closed.
 */
class SlowConsumerCloseCodeIT {

    private static final int FRAME = 4_600;
    private static final Duration GRACE = Duration.ofMillis(300);
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** The default per-client queue (1 MiB): more than the kernel's socket buffers hold for a stalled reader. */
    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .slowConsumerPolicy(SlowConsumerPolicy.DISCONNECT).slowConsumerGrace(GRACE)
            // The stalled client never sends: on a slow run the default 30 s keepalive would ping it
            // and the ping would sit among the stream's messages. Keepalive is tested elsewhere.
            .pingInterval(Duration.ofMinutes(5)).idleTimeout(Duration.ofMinutes(10)));

    private static byte[] message(int seq) {
        byte[] b = new byte[FRAME];
        b[0] = (byte) (seq >>> 24);
        b[1] = (byte) (seq >>> 16);
        b[2] = (byte) (seq >>> 8);
        b[3] = (byte) seq;
        return b;
    }

    private static int seq(byte[] b) {
        return ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    }

    @Test
    void aStalledReceiverFindsClose1013BehindItsBacklog() throws Exception {
        try (NettyClient pub = NettyClient.connect(relay.ws("/in/slow"));
             RawClient stalled = new RawClient(relay.port(), 4096)) {
            assertTrue(stalled.upgrade("/out/slow").startsWith("HTTP/1.1 101"));
            await("both joined", WAIT, () -> relay.server().connections() == 2);
            Topic topic = relay.server().topics().topics().iterator().next();
            RelaySession watched = null;
            for (Member m : topic.members()) {
                RelaySession s = (RelaySession) m;
                if (s.channel().remoteAddress().toString().endsWith(":" + stalled.socket.getLocalPort())) {
                    watched = s;
                }
            }
            assertTrue(watched != null, "found the stalled session");

            // Stop reading (the test simply does not read) and stream on: until the first drop, then
            // for several graces more, so the relay sees it keep dropping and decides.
            long deadline = System.nanoTime() + WAIT.toNanos();
            long decideBy = Long.MAX_VALUE;
            int sent = 0;
            while (System.nanoTime() < decideBy) {
                assertTrue(System.nanoTime() < deadline, "no drop after " + sent + " messages");
                pub.write(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(message(sent++))));
                pub.flush();
                if (decideBy == Long.MAX_VALUE && watched.stats().dropped() > 0) {
                    decideBy = System.nanoTime() + 5 * GRACE.toNanos();
                }
                Thread.sleep(1);
            }
            assertTrue(watched.stats().dropped() > 0);

            // Resume reading: whole messages of the stream, in order, then the close frame.
            int last = -1;
            int received = 0;
            RawClient.Frame close = null;
            try {
                while (close == null) {
                    RawClient.Frame f = stalled.readFrame((int) WAIT.toMillis());
                    if (f == null) {
                        fail("the connection ended without a close frame after " + received + " messages");
                    }
                    if (f.opcode() == 0x8) {
                        close = f;
                    } else {
                        assertEquals(0x2, f.opcode(), "binary messages only");
                        assertEquals(FRAME, f.payload().length, "a message cut short");
                        int s = seq(f.payload());
                        assertTrue(s > last && s < sent, "out of order: " + s + " after " + last);
                        last = s;
                        received++;
                    }
                }
            } catch (IOException e) {
                throw new AssertionError("the connection was reset without a close frame after " + received
                        + " messages (" + e + ")", e);
            }
            assertTrue(received < sent, "the stalled client cannot have received everything");
            assertEquals(1013, close.closeCode(), "close reason: " + close.closeReason());
            assertTrue(!close.closeReason().isEmpty(), "a close carries a reason");

            // The relay refuses deliveries once it has decided to close: nothing follows the close frame.
            try {
                RawClient.Frame after = stalled.readFrame(5_000);
                assertEquals(null, after, "a frame after the close frame");
            } catch (IOException e) {
                // A reset after the close frame is fine: the close was delivered.
            }
        }
    }
}
