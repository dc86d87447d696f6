package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Each event loop reuses one receive buffer from read to read (LoopReceiveBuffers). On a relay with
 * one loop, every connection's reads share it: a frame that arrives over several reads, or a
 * message still queued for a reader that does not read, must come out intact however many other
 * reads the loop makes meanwhile.
 */
class ReceiveBufferReuseIT {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.eventLoops(1));

    private void awaitMembers(String topic, int n) {
        await(n + " members on " + topic, WAIT, () -> relay.server().topics().topics().stream()
                .anyMatch(t -> t.key().name().equals(topic) && t.members().length == n));
    }

    private RawClient upgraded(int receiveBuffer, String path) throws Exception {
        RawClient c = new RawClient(relay.port(), receiveBuffer);
        String head = c.upgrade(path);
        assertTrue(head.startsWith("HTTP/1.1 101"), head);
        return c;
    }

    private static byte[] pattern(int seed, int size) {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) (seed * 31 + i * 7);
        }
        return b;
    }

    @Test
    void aFrameArrivingOverSeveralReadsSurvivesOtherConnectionsReadsBetween() throws Exception {
        try (RawClient sender = upgraded(0, "/lab/split"); JdkClient receiver = JdkClient.connect(relay.ws("/lab/split"));
             RawClient other = upgraded(0, "/lab/busy"); JdkClient otherReceiver = JdkClient.connect(relay.ws("/lab/busy"))) {
            awaitMembers("/lab/split", 2);
            awaitMembers("/lab/busy", 2);
            for (int i = 0; i < 20; i++) {
                byte[] message = pattern(i, 300 + i);
                byte[] frame = RawClient.frame(0x82, message, true);
                int cut = 2 + i * 7 % (frame.length - 2); // inside the header or the payload
                sender.send(Arrays.copyOfRange(frame, 0, cut));
                Thread.sleep(20); // the relay reads the first part and keeps it
                byte[] between = pattern(1000 + i, 200);
                other.send(RawClient.frame(0x82, between, true)); // a read on the same loop
                assertArrayEquals(between, otherReceiver.take(WAIT).data(), "the other topic's message " + i);
                sender.send(Arrays.copyOfRange(frame, cut, frame.length));
                assertArrayEquals(message, receiver.take(WAIT).data(), "message " + i + " cut at byte " + cut);
            }
        }
    }

    @Test
    void messagesQueuedForAReaderThatDoesNotReadKeepTheirBytes() throws Exception {
        int count = 64;
        int size = 2048;
        try (RawClient sender = upgraded(0, "/lab/queued"); RawClient stalled = upgraded(4096, "/lab/queued");
             RawClient other = upgraded(0, "/lab/busy"); JdkClient otherReceiver = JdkClient.connect(relay.ws("/lab/busy"))) {
            awaitMembers("/lab/queued", 2);
            awaitMembers("/lab/busy", 2);
            for (int i = 0; i < count; i++) {
                sender.send(RawClient.frame(0x82, pattern(i, size), true));
                byte[] between = pattern(5000 + i, 100);
                other.send(RawClient.frame(0x82, between, true));
                assertArrayEquals(between, otherReceiver.take(WAIT).data(), "the other topic's message " + i);
            }
            for (int i = 0; i < count; i++) {
                RawClient.Frame f = stalled.readFrame(10_000);
                assertNotNull(f, "message " + i + " of " + count);
                assertEquals(0x2, f.opcode());
                assertArrayEquals(pattern(i, size), f.payload(), "message " + i);
            }
        }
    }
}
