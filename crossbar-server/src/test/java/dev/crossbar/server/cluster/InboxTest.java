package dev.crossbar.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.broker.RemoteDelivery;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.schema.OneToMany;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A lossless stream's receiving end: in order and once, asking again for what is missing, and a
 * verdict (every local member closed, every other node told) where a loss cannot be made good.
 */
class InboxTest {

    private static final TopicKey KEY = new TopicKey(OneToMany.INSTANCE, "files/x");
    private static final long TIMEOUT = TimeUnit.SECONDS.toNanos(4);
    private static final long STREAM = 77;

    private final NatsStats stats = new NatsStats();
    private final OwnStreams own = new OwnStreams();
    private final List<String> delivered = new ArrayList<>();
    private final List<String> broken = new ArrayList<>();
    private final List<String> published = new ArrayList<>();
    private final AtomicLong buffered = new AtomicLong();
    private final RemoteDelivery delivery = new RemoteDelivery() {
        @Override
        public int deliver(TopicKey topic, boolean text, ByteBuf payload) {
            try {
                delivered.add(payload.toString(StandardCharsets.UTF_8));
            } finally {
                payload.release();
            }
            return 1;
        }

        @Override
        public void broken(TopicKey topic, boolean senders, String reason) {
            broken.add((senders ? "senders and receivers: " : "receivers: ") + reason);
        }
    };
    private final Inbox inbox = new Inbox(5, "node-b", KEY, delivery, (subject, data) -> {
        published.add(subject.substring(0, subject.indexOf('.', 9)) + " " + (data[0] == 1
                ? "record " + Envelope.parse(data).part : new String(data, StandardCharsets.UTF_8)));
        return true;
    }, stats, 100, 1000, buffered, TIMEOUT, own);
    private long now = 1_000_000_000L;

    /** Message {@code seq} of the stream, {@code body} split into chunks of at most {@code room} bytes. */
    private void send(long seq, String body, int room) {
        byte[] m = body.getBytes(StandardCharsets.UTF_8);
        int header = Envelope.headerLength(null);
        int offset = 0;
        int part = 0;
        do {
            int n = Math.min(room, m.length - offset);
            byte[] data = new byte[header + n];
            Envelope.writeHeader(data, Envelope.LOSSLESS | Envelope.TEXT | (offset + n < m.length ? Envelope.MORE : 0),
                    STREAM, seq, part++, m.length, null);
            System.arraycopy(m, offset, data, header, n);
            inbox.accept(Envelope.parse(data), data, now);
            offset += n;
        } while (offset < m.length);
    }

    private void send(long seq) {
        send(seq, "m" + seq, 100);
    }

    private void record(byte[] data) {
        inbox.accept(Envelope.parse(data), data, now);
    }

    @Test
    void messagesArriveInOrderOnceWhateverComesTwice() {
        send(1);
        send(2);
        send(2);
        send(1);
        send(3);
        assertEquals(List.of("m1", "m2", "m3"), delivered);
        assertEquals(2, stats.duplicatesIn());
        assertEquals(0, stats.lostIn(), "a lossless stream's gaps are asked for, not counted lost");
    }

    @Test
    void aGapIsAskedForOnceAndWhatFollowsItWaitsForTheResend() {
        send(1);
        send(3);
        send(4);
        assertEquals(List.of("m1"), delivered, "nothing after the gap is delivered before it");
        assertEquals(List.of("crossbar.ack n 5 77 2 node-b"), published, "asked once for 2 (and what follows)");
        now += Inbox.ASK_AGAIN_NANOS + 1;
        send(5);
        assertEquals(2, published.size(), "asked again once the first ask had time to be answered");
        send(2);
        send(3);
        send(4);
        send(5);
        assertEquals(List.of("m1", "m2", "m3", "m4", "m5"), delivered);
    }

    @Test
    void aMessageSentAgainWhileItsChunksArriveIsPutTogetherOnce() {
        String big = "0123456789".repeat(5);
        send(1, big, 20);
        byte[] firstChunkOnly = new byte[Envelope.headerLength(null) + 20];
        Envelope.writeHeader(firstChunkOnly, Envelope.LOSSLESS | Envelope.MORE, STREAM, 2, 0, big.length(), null);
        record(firstChunkOnly);
        send(2, big, 20);
        assertEquals(List.of(big, big), delivered);
        assertEquals(0, buffered.get(), "nothing held once whole");
    }

    @Test
    void aHeartbeatRevealsALossAtTheEndOfTheStream() {
        send(1);
        record(LinkControl.tail(STREAM, 3, false, "node-a", null));
        assertEquals(List.of("crossbar.ack n 5 77 2 node-b"), published);
    }

    @Test
    void aStreamThatEndedWithoutMessagesThisNodeMissedIsAVerdict() {
        send(1);
        record(LinkControl.tail(STREAM, 2, true, "node-a", null));
        assertEquals(List.of("receivers: lost 1 after 1: node-b: node-a's stream ended without them"), broken);
        assertTrue(published.contains("crossbar.1n record 3"), "told the other receiving nodes: " + published);
        assertTrue(published.contains("crossbar.ack x 77 1 1 0 node-b: node-a's stream ended without them"),
                "and the sending node: " + published);
        assertEquals(1, stats.losslessLost());
        send(2);
        assertEquals(List.of("m1"), delivered, "nothing more is taken from a broken stream");
    }

    @Test
    void aStreamThatEndedWithEverythingIsLetGoQuietly() {
        send(1);
        record(LinkControl.tail(STREAM, 1, true, "node-a", null));
        now += TIMEOUT + 1;
        inbox.tick(now);
        assertEquals(List.of(), broken);
    }

    @Test
    void aSenderThatDiesAsItsStreamBeginsIsAVerdictForASubscriptionThatHeardItBegin() {
        // Its node died a moment into a transfer: the hello and a heartbeat came, no message did.
        record(LinkControl.hello(STREAM, 0, null));
        record(LinkControl.tail(STREAM, 3, false, "node-a", null));
        now += TIMEOUT + 1;
        inbox.tick(now);
        assertEquals(List.of("receivers: lost 3+ after 0: node-b: node-a silent for 4s"), broken);
    }

    @Test
    void aStreamOnlyHeardOfInPassingIsLetGoQuietly() {
        record(LinkControl.tail(STREAM, 3, false, "node-a", null)); // a heartbeat, before this subscriber
        now += TIMEOUT + 1;
        inbox.tick(now);
        assertEquals(List.of(), broken);
    }

    @Test
    void aSenderSilentPastTheTimeoutWithoutEndingIsAVerdictThatMoreMayBeLost() {
        send(1);
        record(LinkControl.tail(STREAM, 1, false, "node-a", null));
        now += TIMEOUT;
        inbox.tick(now);
        assertEquals(List.of(), broken, "not before the timeout");
        now += 1;
        inbox.tick(now);
        assertEquals(List.of("receivers: lost 0+ after 1: node-b: node-a silent for 4s"), broken);
    }

    @Test
    void aVerdictFromAnotherNodeClosesThisNodesReceiversOnce() {
        send(1);
        Verdict v = new Verdict(STREAM, 1, 2, false, "node-c missed them; node-a no longer has them");
        record(LinkControl.lost(v, 3, null));
        record(LinkControl.lost(v, 3, null));
        assertEquals(List.of("receivers: " + v.reason()), broken);
    }

    @Test
    void aVerdictSaidAgainOnAStreamNeverSeenHereClosesOnceWhileTheSenderRepeatsIt() {
        // The sender's first record was lost with a failing link: this node heard of the stream only
        // through the verdict, said again each heartbeat for the timeout.
        Verdict v = new Verdict(STREAM, 0, 7, false, "node-a: over --nats-max-pending for other nodes");
        for (int i = 0; i < 6; i++) {
            record(LinkControl.lost(v, 7, null));
            inbox.tick(now);
            now += TIMEOUT / 4;
        }
        assertEquals(List.of("receivers: " + v.reason()), broken, "once, not again for each repeat");
    }

    @Test
    void aSubscriptionThatHeardTheStreamBeginAsksForItsFirstMessagesRatherThanStartLater() {
        record(LinkControl.hello(STREAM, 0, null));
        published.clear();
        send(3); // 1 and 2 were lost on the way (a server hung with them)
        assertEquals(List.of(), delivered, "not from 3: it is owed 1 and 2");
        assertEquals(List.of("crossbar.ack n 5 77 1 node-b"), published, "it asks from 1");
        send(1);
        send(2);
        send(3);
        assertEquals(List.of("m1", "m2", "m3"), delivered);
    }

    @Test
    void withoutTheHelloAStreamStartsAtTheFirstMessageSeen() {
        send(3);
        send(4);
        assertEquals(List.of("m3", "m4"), delivered, "a subscriber that came in the middle");
    }

    @Test
    void thisNodesOwnStreamComingBackIsNeverDelivered() {
        own.add(STREAM);
        send(1);
        record(LinkControl.tail(STREAM, 1, false, "node-b", null));
        assertEquals(List.of(), delivered);
        assertEquals(List.of(), published, "nothing asked of itself");
        assertEquals(1, stats.duplicatesIn());
    }

    @Test
    void acknowledgedEverySixtyFourMessagesAndWhatIsLeftAtTheNextTick() {
        for (int i = 1; i <= Inbox.ACK_EVERY_MESSAGES; i++) {
            send(i);
        }
        assertEquals(List.of("crossbar.ack a 5 77 1 64 node-b"), published);
        published.clear();
        inbox.tick(now);
        assertEquals(List.of(), published, "nothing new to acknowledge");
    }

    @Test
    void aMessageIsAcknowledgedByTheNextTickAndEveryHeartbeat() {
        send(1);
        assertEquals(List.of(), published);
        inbox.tick(now);
        assertEquals(List.of("crossbar.ack a 5 77 1 1 node-b"), published);
        inbox.heartbeat();
        assertEquals(List.of("crossbar.ack a 5 77 1 1 node-b", "crossbar.ack p 5 node-b", "crossbar.ack a 5 77 1 1 node-b"),
                published, "a heartbeat says it is there, and what it has");
    }

    @Test
    void aMessageLargerThanThisNodeTakesIsAVerdict() {
        send(1, "x".repeat(101), 200);
        assertEquals(List.of("receivers: lost 1 after 0: node-b: refuses messages over its --max-message"), broken);
    }

    @Test
    void helloIsAnsweredAtOnceAndAnEndedSubscriptionSaysGoodbye() {
        record(LinkControl.hello(STREAM, 0, null));
        inbox.close();
        assertEquals(List.of("crossbar.ack p 5 node-b", "crossbar.ack b 5 node-b"), published);
    }
}
