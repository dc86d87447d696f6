package dev.crossbar.server.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Envelopes and reassembly: whole messages once and in order, losses and duplicates counted. */
class ReassemblerTest {

    private final NatsStats stats = new NatsStats();
    private final AtomicLong buffered = new AtomicLong();
    private final Reassembler r = new Reassembler(1000, 5000, buffered, stats);

    /** The NATS messages a sender would publish for one message, with at most {@code room} bytes of it each. */
    private static List<byte[]> chunks(long stream, long seq, boolean text, byte[] message, int room, byte[] key) {
        List<byte[]> out = new ArrayList<>();
        int header = Envelope.headerLength(key);
        int offset = 0;
        int part = 0;
        do {
            int n = Math.min(room, message.length - offset);
            byte[] data = new byte[header + n];
            Envelope.writeHeader(data, text, offset + n < message.length, stream, seq, part++, message.length, key);
            System.arraycopy(message, offset, data, header, n);
            out.add(data);
            offset += n;
        } while (offset < message.length);
        return out;
    }

    private byte[] feed(byte[] data) {
        Reassembler.Whole w = r.accept(Envelope.parse(data), data, System.nanoTime());
        if (w == null) {
            return null;
        }
        try {
            assertTrue(w.payload().refCnt() > 0);
            return ByteBufUtil.getBytes(w.payload());
        } finally {
            w.payload().release();
        }
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed * 31 + i);
        }
        return b;
    }

    @Test
    void envelopeRoundTripsTypeKeyAndPayload() {
        byte[] key = "n:n /a b".getBytes(StandardCharsets.UTF_8);
        byte[] data = chunks(7, 3, true, "héllo".getBytes(StandardCharsets.UTF_8), 100, key).get(0);
        Envelope e = Envelope.parse(data);
        assertTrue(e.text());
        assertEquals(7, e.stream);
        assertEquals(3, e.seq);
        assertEquals("n:n /a b", e.key);
        assertEquals("héllo", new String(data, e.payloadOffset, e.payloadLength, StandardCharsets.UTF_8));
        assertThrows(IllegalArgumentException.class, () -> Envelope.parse(new byte[3]));
        byte[] bad = data.clone();
        bad[0] = 9;
        assertThrows(IllegalArgumentException.class, () -> Envelope.parse(bad));
        byte[] empty = chunks(1, 1, false, new byte[0], 100, null).get(0);
        assertEquals(0, Envelope.parse(empty).payloadLength);
    }

    @Test
    void chunksComeBackWholeAndInOrder() {
        byte[] big = bytes(950, 1);
        List<byte[]> parts = chunks(1, 1, false, big, 100, null);
        assertEquals(10, parts.size());
        for (int i = 0; i < parts.size() - 1; i++) {
            assertNull(feed(parts.get(i)));
        }
        assertArrayEquals(big, feed(parts.get(parts.size() - 1)));
        assertArrayEquals(bytes(5, 2), feed(chunks(1, 2, false, bytes(5, 2), 100, null).get(0)));
        assertEquals(0, buffered.get());
        assertEquals(0, stats.lostIn() + stats.duplicatesIn() + stats.droppedIn());
    }

    @Test
    void gapsCountAsLostAndRepeatsAreDropped() {
        assertArrayEquals(bytes(3, 1), feed(chunks(9, 10, false, bytes(3, 1), 100, null).get(0)));
        assertArrayEquals(bytes(3, 4), feed(chunks(9, 13, false, bytes(3, 4), 100, null).get(0)));
        assertEquals(2, stats.lostIn(), "11 and 12 never came");
        assertNull(feed(chunks(9, 12, false, bytes(3, 3), 100, null).get(0)));
        assertNull(feed(chunks(9, 13, false, bytes(3, 4), 100, null).get(0)));
        assertEquals(2, stats.duplicatesIn());
        // Another stream keeps its own count.
        assertArrayEquals(bytes(1, 1), feed(chunks(10, 500, false, bytes(1, 1), 100, null).get(0)));
        assertEquals(2, stats.lostIn());
    }

    @Test
    void aMissingChunkLosesOneMessageAndTheRestOfItIsIgnored() {
        List<byte[]> first = chunks(5, 1, true, bytes(400, 1), 100, null);
        feed(first.get(0));
        feed(first.get(2));
        assertEquals(1, stats.lostIn());
        assertNull(feed(first.get(3)), "the rest of a lost message is not a new loss");
        assertEquals(1, stats.lostIn());
        assertEquals(0, buffered.get());
        byte[] next = bytes(250, 2);
        List<byte[]> second = chunks(5, 2, false, next, 100, null);
        feed(second.get(0));
        feed(second.get(1));
        assertArrayEquals(next, feed(second.get(2)));
        // A message whose first chunk is missing: counted once.
        List<byte[]> third = chunks(5, 3, false, bytes(250, 3), 100, null);
        feed(third.get(1));
        feed(third.get(2));
        assertEquals(2, stats.lostIn());
        assertEquals(0, r.partials());
    }

    @Test
    void joiningMidMessageIsNotALoss() {
        List<byte[]> m = chunks(6, 40, false, bytes(300, 1), 100, null);
        feed(m.get(1));
        feed(m.get(2));
        assertArrayEquals(bytes(2, 2), feed(chunks(6, 41, false, bytes(2, 2), 100, null).get(0)));
        assertEquals(0, stats.lostIn());
    }

    @Test
    void tooLargeOrOverBudgetIsRefusedAndCounted() {
        List<byte[]> huge = chunks(3, 1, false, bytes(1001, 1), 500, null);
        for (byte[] c : huge) {
            assertNull(feed(c));
        }
        assertEquals(1, stats.droppedIn());
        assertEquals(0, stats.lostIn());
        // Budget 5000 bytes shared: one partial of 900 per stream, six streams; the sixth does not fit.
        for (int s = 0; s < 6; s++) {
            feed(chunks(100 + s, 1, false, bytes(900, s), 100, null).get(0));
        }
        assertEquals(2, stats.droppedIn());
        assertEquals(5 * 900, buffered.get());
        r.close();
        assertEquals(0, buffered.get(), "closing gives the budget back");
    }

    @Test
    void thisNodesOwnStreamComingBackThroughAServerItLeftIsNeverDelivered() {
        OwnStreams own = new OwnStreams();
        own.add(9);
        Reassembler mine = new Reassembler(1000, 5000, buffered, stats, own);
        for (byte[] chunk : chunks(9, 1, false, bytes(300, 1), 100, null)) {
            assertNull(mine.accept(Envelope.parse(chunk), chunk, System.nanoTime()));
        }
        assertEquals(0, mine.partials());
        assertEquals(0, stats.lostIn());
        assertTrue(stats.duplicatesIn() > 0, "counted as what it is: a second copy");
    }

    @Test
    void manyStreamsAreForgottenOldestFirstWithinTheCap() {
        for (int s = 0; s < Reassembler.MAX_STREAMS + 10; s++) {
            feed(chunks(s, 1, false, bytes(1, s), 100, null).get(0));
        }
        // Stream 0 was forgotten: seeing it again at seq 5 starts afresh, no loss counted.
        assertArrayEquals(bytes(1, 0), feed(chunks(0, 5, false, bytes(1, 0), 100, null).get(0)));
        assertEquals(0, stats.lostIn());
        assertTrue(Arrays.equals(bytes(1, 7), feed(chunks(Reassembler.MAX_STREAMS + 9, 2, false, bytes(1, 7), 100, null).get(0))));
    }
}
