package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Control frames (docs/protocol.md, Messages): the relay answers a ping with a pong carrying its
 * payload, and never relays pings, pongs or close frames to the other members of a topic. The
 * receivers are raw sockets, so they see every frame the relay sends, control frames included.
 */
class ControlFramesIT {

    private static final int PING = 0x9;
    private static final int PONG = 0xA;
    private static final int CLOSE = 0x8;
    private static final int TEXT = 0x1;
    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Ping and idle timers far longer than a test: any ping a receiver sees would be a relayed one. */
    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension();

    private void awaitMembers(String topic, int n) {
        await(n + " members on " + topic, WAIT, () -> relay.server().topics().topics().stream()
                .anyMatch(t -> t.key().name().equals(topic) && t.members().length == n));
    }

    private static RawClient upgraded(RelayServerExtension relay, String path) throws Exception {
        RawClient c = new RawClient(relay.port());
        String head = c.upgrade(path);
        assertTrue(head.startsWith("HTTP/1.1 101"), head);
        return c;
    }

    @Test
    void pingIsAnsweredWithAPongCarryingItsPayload() throws Exception {
        byte[] payload = {'p', 'i', 'n', 'g', 0, (byte) 0xff, (byte) 0x80, 42};
        try (RawClient c = upgraded(relay, "/lab/ping")) {
            c.send(RawClient.frame(0x80 | PING, payload, true));
            RawClient.Frame pong = c.readFrame(10_000);
            assertNotNull(pong, "no answer to a ping");
            assertEquals(PONG, pong.opcode(), "a ping is answered with a pong");
            assertTrue(pong.fin());
            assertArrayEquals(payload, pong.payload(), "the pong carries the ping's payload");

            // An empty ping too, and the connection still relays afterwards.
            c.send(RawClient.frame(0x80 | PING, new byte[0], true));
            RawClient.Frame empty = c.readFrame(10_000);
            assertNotNull(empty);
            assertEquals(PONG, empty.opcode());
            assertEquals(0, empty.payload().length);
        }
    }

    @Test
    void pingsPongsAndClosesAreNeverRelayedToOtherMembers() throws Exception {
        try (RawClient sender = upgraded(relay, "/lab/ctl");
             RawClient rawReceiver = upgraded(relay, "/lab/ctl");
             JdkClient jdkReceiver = JdkClient.connect(relay.ws("/lab/ctl"))) {
            awaitMembers("/lab/ctl", 3);
            sender.send(RawClient.frame(0x80 | PING, "relay me?".getBytes(StandardCharsets.UTF_8), true));
            sender.send(RawClient.frame(0x80 | PONG, "unsolicited".getBytes(StandardCharsets.UTF_8), true));
            sender.send(RawClient.frame(0x80 | TEXT, "marker".getBytes(StandardCharsets.UTF_8), true));
            // The sender's own pong answer comes back to it, and nothing else.
            RawClient.Frame answer = sender.readFrame(10_000);
            assertNotNull(answer);
            assertEquals(PONG, answer.opcode());

            // The marker follows the control frames on the same connection, so once it has arrived
            // anything relayed from before it would have arrived first.
            RawClient.Frame first = rawReceiver.readFrame(10_000);
            assertNotNull(first, "the data message was not relayed");
            assertEquals(TEXT, first.opcode(), "the first frame another member sees is the data message, not a control frame");
            assertEquals("marker", new String(first.payload(), StandardCharsets.UTF_8));
            assertEquals("marker", jdkReceiver.take(WAIT).string());

            // The sender closes: the others get no close frame and stay connected.
            sender.send(RawClient.frame(0x80 | CLOSE, new byte[] {0x03, (byte) 0xe8, 'b', 'y', 'e'}, true));
            RawClient.Frame closeReply = sender.readUntilClose(10_000);
            assertNotNull(closeReply, "the relay answers a close with a close");
            assertEquals(1000, closeReply.closeCode());
            awaitMembers("/lab/ctl", 2);
            assertNull(rawReceiver.readFrame(300), "nothing reaches another member after the sender's control frames");
            assertNull(jdkReceiver.poll(Duration.ofMillis(100)));

            // Both receivers are still members: a message between them arrives.
            rawReceiver.send(RawClient.frame(0x80 | TEXT, "still here".getBytes(StandardCharsets.UTF_8), true));
            assertEquals("still here", jdkReceiver.take(WAIT).string());
        }
    }

    @Test
    void aPublishersControlFramesNeverReachSubscribers() throws Exception {
        try (RawClient pub = upgraded(relay, "/in/cam");
             RawClient sub = upgraded(relay, "/out/cam")) {
            awaitMembers("cam", 2);
            pub.send(RawClient.frame(0x80 | PING, new byte[] {1, 2, 3}, true));
            pub.send(RawClient.frame(0x80 | PONG, new byte[] {4, 5, 6}, true));
            pub.send(RawClient.frame(0x80 | 0x2, new byte[] {7, 8, 9}, true));
            pub.send(RawClient.frame(0x80 | CLOSE, new byte[] {0x03, (byte) 0xe8}, true));
            RawClient.Frame first = sub.readFrame(10_000);
            assertNotNull(first);
            assertEquals(0x2, first.opcode(), "the subscriber's first frame is the binary message");
            assertArrayEquals(new byte[] {7, 8, 9}, first.payload());
            awaitMembers("cam", 1);
            assertNull(sub.readFrame(300), "no control frame follows");
        }
    }
}
