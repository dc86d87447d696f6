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
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Fragmented messages from a raw client (docs/protocol.md, Messages and Close codes): a new data
 * frame inside a fragmented message is a protocol error (1002); UTF-8 is checked over the whole
 * message, so a character split across fragments is valid and relayed byte for byte, while a
 * message whose last fragment ends inside a character is invalid (1007). Nothing of a refused
 * message reaches the other members, and they carry on.
 */
class FragmentationIT {

    private static final Duration WAIT = Duration.ofSeconds(10);
    /** One-, two-, three- and four-byte characters: every fragment split below cuts some of them. */
    private static final byte[] MIXED = "a\u00e9\u20ac\ud834\udd1ez\u00e9\u20ac\ud834\udd1e!".getBytes(StandardCharsets.UTF_8);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension();

    private void awaitMembers(int n) {
        await(n + " members on /lab/frag", WAIT, () -> relay.server().topics().topics().stream()
                .anyMatch(t -> t.key().name().equals("/lab/frag") && t.members().length == n));
    }

    private RawClient upgraded() throws Exception {
        RawClient c = new RawClient(relay.port());
        String head = c.upgrade("/lab/frag");
        assertTrue(head.startsWith("HTTP/1.1 101"), head);
        return c;
    }

    /** {@code data} as text fragments of {@code size} bytes: a text frame, then continuations; FIN on the last. */
    private static byte[] textFragments(byte[] data, int size) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int off = 0; off < data.length; off += size) {
            int len = Math.min(size, data.length - off);
            boolean fin = off + len == data.length;
            int opcode = off == 0 ? 0x1 : 0x0;
            out.writeBytes(RawClient.frame((fin ? 0x80 : 0) | opcode, Arrays.copyOfRange(data, off, off + len), true));
        }
        return out.toByteArray();
    }

    @Test
    void utf8SplitAcrossFragmentsIsRelayedByteExact() throws Exception {
        try (RawClient sender = upgraded(); RawClient raw = upgraded();
             JdkClient jdk = JdkClient.connect(relay.ws("/lab/frag"))) {
            awaitMembers(3);
            for (int size : new int[] {1, 2, 3, 5}) {
                sender.send(textFragments(MIXED, size));
                RawClient.Frame f = raw.readFrame(10_000);
                assertNotNull(f, "nothing relayed for fragments of " + size + " bytes");
                assertEquals(0x1, f.opcode(), "relayed as text");
                assertTrue(f.fin(), "relayed as one frame");
                assertArrayEquals(MIXED, f.payload(), "byte-exact for fragments of " + size + " bytes");
                assertArrayEquals(MIXED, jdk.take(WAIT).data());
            }
        }
    }

    @Test
    void aSequenceCutAtFinClosesWith1007() throws Exception {
        try (RawClient sender = upgraded(); RawClient raw = upgraded();
             JdkClient jdk = JdkClient.connect(relay.ws("/lab/frag"))) {
            awaitMembers(3);
            byte[] clef = "\ud834\udd1e".getBytes(StandardCharsets.UTF_8); // F0 9D 84 9E
            sender.send(RawClient.frame(0x01, new byte[] {'o', 'k', clef[0], clef[1]}, true));
            sender.send(RawClient.frame(0x80, new byte[] {clef[2]}, true)); // FIN, one byte short
            RawClient.Frame close = sender.readUntilClose(10_000);
            assertNotNull(close, "no close frame");
            assertEquals(1007, close.closeCode(), close.closeReason());
            awaitMembers(2);
            assertNull(raw.readFrame(300), "nothing of the invalid message is relayed");
            assertNull(jdk.poll(Duration.ofMillis(100)));
            raw.send(RawClient.frame(0x81, "others carry on".getBytes(StandardCharsets.UTF_8), true));
            assertEquals("others carry on", jdk.take(WAIT).string());
        }
    }

    @Test
    void aNewDataFrameInsideAFragmentedMessageClosesWith1002() throws Exception {
        for (int second : new int[] {0x81, 0x82, 0x01}) { // text, binary, or a non-final text frame
            try (RawClient sender = upgraded(); JdkClient jdk = JdkClient.connect(relay.ws("/lab/frag"))) {
                awaitMembers(2);
                sender.send(RawClient.frame(0x02, new byte[] {1, 2, 3}, true)); // binary, not FIN
                sender.send(RawClient.frame(second, new byte[] {4, 5, 6}, true)); // a new message: refused
                RawClient.Frame close = sender.readUntilClose(10_000);
                assertNotNull(close, "no close frame after first byte 0x" + Integer.toHexString(second));
                assertEquals(1002, close.closeCode(), close.closeReason());
                awaitMembers(1);
                assertNull(jdk.poll(Duration.ofMillis(200)), "nothing of either message is relayed");
            }
            await("topic gone", WAIT, () -> relay.server().topics().size() == 0);
        }
    }
}
