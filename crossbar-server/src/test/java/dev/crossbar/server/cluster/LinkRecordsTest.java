package dev.crossbar.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The lossless link's lines and records on the wire (docs/protocol.md, "Lossless streams across nodes"). */
class LinkRecordsTest {

    private static final byte[] KEY = "1:n files/x".getBytes(StandardCharsets.UTF_8);

    @Test
    void ackLinesSayWhatTheyCarryAndNodeNamesMayHoldSpaces() {
        AckLine p = AckLine.parse(AckLine.present(-7, "lab eu 1"));
        assertEquals(AckLine.PRESENT, p.kind());
        assertEquals(-7, p.receiver());
        assertEquals("lab eu 1", p.node());
        AckLine a = AckLine.parse(AckLine.ack(5, Long.MIN_VALUE, 3, 99, "b"));
        assertEquals(AckLine.ACK, a.kind());
        assertEquals(Long.MIN_VALUE, a.stream());
        assertEquals(3, a.first());
        assertEquals(99, a.last());
        assertEquals("p 5 b", new String(AckLine.present(5, "b"), StandardCharsets.UTF_8), "the documented form");
        AckLine n = AckLine.parse(AckLine.missing(5, 42, 17, "b"));
        assertEquals(AckLine.MISSING, n.kind());
        assertEquals(17, n.first());
        assertEquals(AckLine.BYE, AckLine.parse(AckLine.bye(5, "b")).kind());
        Verdict v = new Verdict(42, 16, 3, true, "node-b: node-a silent for 60s");
        assertEquals(v, AckLine.parse(AckLine.lost(v)).verdict());
    }

    @Test
    void malformedAckLinesAreRefusedSayingWhy() {
        for (String bad : new String[] {"", "p", "p 1", "q 1 b", "a 1 2 3 node", "n x 2 3 b", "p1 b"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> AckLine.parse(bad.getBytes(StandardCharsets.UTF_8)), bad);
            assertTrue(e.getMessage().startsWith("ack line"), e.getMessage());
        }
    }

    @Test
    void controlRecordsTravelInEnvelopesInOrderWithTheMessages() {
        byte[] tail = LinkControl.tail(9, 120, true, "node-a", KEY);
        Envelope e = Envelope.parse(tail);
        assertTrue(e.control() && e.lossless());
        assertEquals("1:n files/x", e.key, "the topic key, as on any hashed-subject envelope");
        LinkControl t = LinkControl.parse(e, tail);
        assertEquals(LinkControl.TAIL, t.kind);
        assertEquals(120, t.last);
        assertTrue(t.ended);
        assertEquals("node-a", t.node);

        byte[] hello = LinkControl.hello(9, 0, null);
        LinkControl h = LinkControl.parse(Envelope.parse(hello), hello);
        assertEquals(LinkControl.HELLO, h.kind);
        assertEquals(0, h.last, "a stream that has sent nothing yet");

        Verdict v = new Verdict(9, 16, 3, false, "node-a: NATS link down for more than 60s");
        byte[] lost = LinkControl.lost(v, 19, null);
        assertEquals(v, LinkControl.parse(Envelope.parse(lost), lost).verdict);
    }

    @Test
    void aMessageEnvelopeNeedsASequenceNumberAControlRecordMayHaveNone() {
        byte[] data = new byte[Envelope.FIXED_BYTES];
        Envelope.writeHeader(data, Envelope.LOSSLESS, 1, 0, 0, 0, null);
        assertThrows(IllegalArgumentException.class, () -> Envelope.parse(data));
        byte[] unknownKind = new byte[Envelope.FIXED_BYTES];
        Envelope.writeHeader(unknownKind, Envelope.CONTROL | Envelope.LOSSLESS, 1, 0, 9, 0, null);
        assertThrows(IllegalArgumentException.class,
                () -> LinkControl.parse(Envelope.parse(unknownKind), unknownKind));
    }

    @Test
    void theCloseReasonSaysHowManyAfterWhichAndFitsACloseFrame() {
        assertEquals("lost 3 after 16: node-b missed them", new Verdict(1, 16, 3, false, "node-b missed them").reason());
        assertEquals("lost 0+ after 45: node-s: node-p silent for 60s",
                new Verdict(1, 45, 0, true, "node-s: node-p silent for 60s").reason());
        String longWhy = "ü".repeat(200);
        String r = new Verdict(1, 2, 3, false, longWhy).reason();
        byte[] utf8 = r.getBytes(StandardCharsets.UTF_8);
        assertTrue(utf8.length <= Verdict.MAX_REASON_BYTES, utf8.length + " bytes");
        assertTrue(r.startsWith("lost 3 after 2: ü"));
        assertFalse(r.endsWith("\uFFFD"), "never cut inside a character");
    }
}
