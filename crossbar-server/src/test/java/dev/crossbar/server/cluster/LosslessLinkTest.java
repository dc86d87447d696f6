package dev.crossbar.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.broker.RemoteDelivery;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.schema.OneToMany;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A lossless stream's sending end: messages kept until every known receiving node has them, sent
 * again when asked or not acknowledged, counted against the link's bound, and a verdict (the
 * topic's members here closed, senders too; the receiving nodes told) when they cannot be.
 */
class LosslessLinkTest {

    private static final TopicKey KEY = new TopicKey(OneToMany.INSTANCE, "files/x");
    private static final long TIMEOUT = TimeUnit.SECONDS.toNanos(4);
    private static final long MAX_PAYLOAD = 1024 * 1024;
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final NatsStats stats = new NatsStats();
    private final OwnStreams own = new OwnStreams();
    private final List<String> broken = new ArrayList<>();
    /** What was published: "m<seq>" for a message's chunk, "tail <last> <ended>", "hello", "lost <reason>". */
    private final List<String> published = new ArrayList<>();
    /** How many verdict records the connection refuses next (a full buffer, between servers). */
    private int refuseVerdicts;
    private final LosslessLink link = new LosslessLink("node-a", stats, new WarnOnce(LoggerFactory.getLogger("test")),
            TIMEOUT, Runnable::run, (subject, data) -> {
                Envelope e = Envelope.parse(data);
                lastStream = e.stream;
                if (!e.control()) {
                    published.add("m" + e.seq);
                } else {
                    LinkControl c = LinkControl.parse(e, data);
                    if (c.kind == LinkControl.LOST && refuseVerdicts > 0) {
                        refuseVerdicts--;
                        return false; // the connection did not take it
                    }
                    published.add(switch (c.kind) {
                        case LinkControl.TAIL -> "tail " + c.last + " " + c.ended;
                        case LinkControl.HELLO -> "hello";
                        default -> "lost " + c.verdict.reason();
                    });
                }
                return true;
            }, new SecureRandom(), own);
    private long now = 1_000_000_000L;
    /** The stream id of the last thing published: receivers' lines name it. */
    private long lastStream;

    LosslessLinkTest() {
        link.attach(null, new RemoteDelivery() {
            @Override
            public int deliver(TopicKey topic, boolean text, ByteBuf payload) {
                payload.release();
                return 0;
            }

            @Override
            public void broken(TopicKey topic, boolean senders, String reason) {
                broken.add((senders ? "senders and receivers: " : "receivers: ") + reason);
            }
        });
        link.listen(KEY, true, now);
        now += Outbox.PRESENCE_GRACE_NANOS; // the stream's first second is the test below
    }

    private void send(int n) {
        for (int i = 0; i < n; i++) {
            ByteBuf payload = Unpooled.wrappedBuffer(("message " + i).getBytes(StandardCharsets.UTF_8));
            try {
                link.send(true, MAX_PAYLOAD, KEY, true, payload, 1000, now);
            } finally {
                payload.release();
            }
        }
    }

    private void line(byte[] l) {
        link.line(KEY, AckLine.parse(l), now);
    }

    @Test
    void aMessageIsKeptUntilEveryKnownReceiverHasIt() {
        line(AckLine.present(1, "node-b"));
        line(AckLine.present(2, "node-c"));
        send(3);
        long id = ownId();
        assertEquals(3000, link.heldBytes());
        line(AckLine.ack(1, id, 1, 3, "node-b"));
        assertEquals(3000, link.heldBytes(), "node-c has none yet");
        line(AckLine.ack(2, id, 1, 2, "node-c"));
        assertEquals(1000, link.heldBytes());
        line(AckLine.bye(2, "node-c"));
        assertEquals(0, link.heldBytes(), "a receiver gone is not waited for");
        assertEquals(List.of("m1", "m2", "m3"), published);
    }

    @Test
    void nothingIsKeptWhileNoReceiverIsKnown() {
        send(2);
        assertEquals(0, link.heldBytes());
    }

    @Test
    void aStreamsFirstSecondIsKeptForAReceiverNotYetHeardOfThenLetGo() {
        TopicKey other = new TopicKey(OneToMany.INSTANCE, "files/new");
        link.listen(other, true, now);
        for (int i = 0; i < 3; i++) {
            ByteBuf payload = Unpooled.wrappedBuffer(("message " + i).getBytes(StandardCharsets.UTF_8));
            try {
                link.send(true, MAX_PAYLOAD, other, true, payload, 1000, now);
            } finally {
                payload.release();
            }
        }
        assertEquals(3000, link.heldBytes(), "kept though no receiver is known yet");
        // A subscriber that was there first says so now; it got the first message, not the others.
        link.line(other, AckLine.parse(AckLine.present(1, "node-b")), now);
        long id = lastStream;
        published.clear();
        link.line(other, AckLine.parse(AckLine.missing(1, id, 2, "node-b")), now);
        assertEquals(List.of("m2", "m3"), published, "sent again: nothing lost");
        assertTrue(broken.isEmpty(), broken.toString());
        link.line(other, AckLine.parse(AckLine.bye(1, "node-b")), now);
        link.tick(true, 0, 0, now + Outbox.PRESENCE_GRACE_NANOS);
        assertEquals(0, link.heldBytes(), "with nobody heard of in the first second, nothing is kept");
    }

    @Test
    void aReceiverAskingIsSentEverythingFromThereAgainButNotTwiceAtOnce() {
        line(AckLine.present(1, "node-b"));
        send(4);
        long id = ownId();
        published.clear();
        line(AckLine.missing(1, id, 2, "node-b"));
        assertEquals(List.of("m2", "m3", "m4"), published);
        assertEquals(3000, link.heldBytes(), "asking for 2 says it has 1");
        line(AckLine.missing(1, id, 3, "node-b"));
        assertEquals(3, published.size(), "within the guard: the echo of the first ask");
        assertEquals(3, stats.resent());
        assertEquals(2000, link.heldBytes());
    }

    @Test
    void askingForWhatIsNoLongerKeptIsAVerdictAndTheStreamStartsAnew() {
        send(1); // nobody known: not kept
        line(AckLine.present(1, "node-b"));
        send(1);
        long id = ownId();
        line(AckLine.missing(1, id, 1, "node-b"));
        String reason = "lost 1 after 0: node-b missed them; node-a no longer has them";
        assertEquals(List.of("senders and receivers: " + reason), broken);
        assertTrue(published.contains("lost " + reason), published.toString());
        assertEquals(0, link.heldBytes());
        assertEquals(1, stats.losslessLost());
        published.clear();
        send(1);
        assertEquals(List.of("m1"), published, "numbered from 1 again");
        assertFalse(ownId() == id, "under a new stream id");
    }

    @Test
    void aReceiverWhoseFirstMessageCameAfterTheOnesItWasOwedIsAVerdict() {
        line(AckLine.present(1, "node-b"));
        send(3);
        line(AckLine.ack(1, ownId(), 2, 3, "node-b"));
        assertEquals(List.of("senders and receivers: lost 1 after 0: node-b missed them"), broken);
    }

    @Test
    void aMessageOverTheBoundIsAVerdict() {
        line(AckLine.present(1, "node-b"));
        send(2);
        link.overflow(KEY);
        assertEquals(List.of("senders and receivers: lost 1 after 2: node-a: over --nats-max-pending for other nodes"),
                broken);
    }

    @Test
    void aVerdictIsSaidAgainAtEachHeartbeatForTheTimeoutWhileTheLinkIsUp() {
        line(AckLine.present(1, "node-b"));
        send(2);
        link.overflow(KEY);
        link.listen(KEY, false, now); // the publisher was closed by the verdict
        java.util.function.Predicate<String> lost = p -> p.startsWith("lost ") && p.endsWith("over --nats-max-pending for other nodes");
        assertEquals(1, published.stream().filter(lost).count());
        published.clear();
        link.tick(false, 0, now, now + LosslessLink.HEARTBEAT_NANOS);
        assertEquals(List.of(), published, "not while the link is down");
        for (int i = 1; i <= 8; i++) {
            link.tick(true, now, 0, now + i * LosslessLink.HEARTBEAT_NANOS + MS);
        }
        long times = TIMEOUT / LosslessLink.HEARTBEAT_NANOS;
        assertEquals(times, published.stream().filter(lost).count(), published.toString());
        assertFalse(link.active(), "the outbox went once its verdict was said and its stream's end too");
    }

    @Test
    void aVerdictTheConnectionRefusedIsSaidBeforeAnythingTheNewStreamSends() {
        line(AckLine.present(1, "node-b"));
        send(2);
        refuseVerdicts = 2;
        link.overflow(KEY);
        published.clear();
        send(2); // the publisher, not yet closed, goes on writing: the new stream's messages 1 and 2
        assertEquals(List.of(), published, "kept behind the verdict");
        link.tick(true, now, 0, now + 30 * MS);
        assertEquals(List.of(), published, "refused again: still kept");
        link.tick(true, now, 0, now + 60 * MS);
        assertTrue(published.get(0).startsWith("lost "), published.toString());
        assertEquals(List.of("m1", "m2"), published.subList(1, 3), "then the new stream, in order");
    }

    @Test
    void whatIsNotAcknowledgedWithinTheWaitIsSentAgainFromTheFirstMissing() {
        line(AckLine.present(1, "node-b"));
        send(2);
        line(AckLine.ack(1, ownId(), 1, 1, "node-b"));
        published.clear();
        link.tick(true, 0, 0, now + Outbox.RESEND_NANOS - 30 * MS);
        assertFalse(published.contains("m2"), "not before the wait");
        link.tick(true, 0, 0, now + Outbox.RESEND_NANOS + 30 * MS);
        assertTrue(published.contains("m2") && !published.contains("m1"), published.toString());
    }

    @Test
    void aReceiverSilentPastTheTimeoutIsForgottenAndWhatWasKeptForItLetGo() {
        line(AckLine.present(1, "node-b"));
        send(2);
        assertEquals(2000, link.heldBytes());
        link.tick(true, now, 0, now + TIMEOUT + MS);
        assertEquals(0, link.heldBytes());
        assertEquals(List.of(), broken, "no verdict: if it comes back, it says what it missed");
    }

    @Test
    void aLinkDownPastTheTimeoutGivesUpWhatIsKept() {
        line(AckLine.present(1, "node-b"));
        send(3);
        line(AckLine.ack(1, ownId(), 1, 1, "node-b"));
        long down = now;
        link.tick(false, 0, down, down + TIMEOUT);
        assertEquals(List.of(), broken);
        link.tick(false, 0, down, down + TIMEOUT + 100 * MS);
        assertEquals(List.of("senders and receivers: lost 2 after 1: node-a: NATS link down for more than 4s"), broken);
        assertEquals(0, link.heldBytes());
    }

    @Test
    void theLinkBackSendsEverythingKeptAgain() {
        line(AckLine.present(1, "node-b"));
        send(3);
        line(AckLine.ack(1, ownId(), 1, 1, "node-b"));
        published.clear();
        link.linkBack(now);
        assertEquals(List.of("m2", "m3", "hello"), published);
    }

    @Test
    void onceTheSendersLeftAndAllIsAcknowledgedTheStreamSaysItEndedThenGoes() {
        line(AckLine.present(1, "node-b"));
        send(1);
        line(AckLine.ack(1, ownId(), 1, 1, "node-b"));
        link.listen(KEY, false, now);
        published.clear();
        for (int i = 0; i < 5; i++) {
            link.tick(true, 0, 0, now += LosslessLink.HEARTBEAT_NANOS);
        }
        assertEquals(List.of("tail 1 true", "tail 1 true", "tail 1 true"), published);
        assertFalse(link.active());
    }

    @Test
    void aReceivingNodesVerdictOnThisStreamClosesItsSendersHere() {
        line(AckLine.present(1, "node-b"));
        send(2);
        Verdict v = new Verdict(ownId(), 2, 0, true, "node-b: node-a silent for 4s");
        line(AckLine.lost(v));
        assertEquals(List.of("senders and receivers: " + v.reason()), broken);
        line(AckLine.lost(v));
        assertEquals(1, broken.size(), "once: the stream started anew under another id");
    }

    /** The id of the stream this node sends on KEY now: that of what it published last. */
    private long ownId() {
        assertTrue(own.contains(lastStream), "the node knows its stream as its own");
        return lastStream;
    }
}
