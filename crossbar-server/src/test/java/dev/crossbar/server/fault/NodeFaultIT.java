package dev.crossbar.server.fault;

import static dev.crossbar.server.fault.NatsFaultIT.counters;
import static dev.crossbar.server.fault.NatsFaultIT.lostReason;
import static dev.crossbar.server.fault.NatsFaultIT.node;
import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.testing.CrossbarProcess;
import dev.crossbar.server.testing.NatsCluster;
import dev.crossbar.server.testing.RawClient;
import io.netty.util.ResourceLeakDetector;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Crossbar node killed (SIGKILL of its JVM, started from the built jar) during a lossless transfer,
 * a video stream and a data stream across nodes, with a two-server NATS cluster. The publisher's node
 * dying loses what it had not passed on: every subscriber of the lossless stream on the other nodes is
 * closed with 4010 once the node has been silent for {@code --nats-lossless-timeout}, saying after
 * which message. A receiving node dying costs the others nothing: the publisher is held while the dead
 * node's messages are kept, and goes on once the node is given up.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class NodeFaultIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(4);
    private static final int FAULT_AFTER = 64;

    private ResourceLeakDetector.Level level;

    @BeforeEach
    void sampleLeaks() {
        level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
    }

    @AfterEach
    void restoreLeaks() {
        ResourceLeakDetector.setLevel(level);
    }

    private static List<String> flags(NatsCluster nats, String servers) {
        List<String> f = new ArrayList<>(List.of("--nats", servers, "--nats-lossless-timeout", TIMEOUT.toSeconds() * 10 + "s"));
        for (String r : FaultStreams.ROUTES) {
            f.add("--route");
            f.add(r);
        }
        return f;
    }

    @Test
    void killingThePublishersNodeClosesTheLosslessSubscribersWith4010(@TempDir Path dir) throws Exception {
        try (NatsCluster nats = NatsCluster.start(dir, 2);
             CrossbarProcess p = CrossbarProcess.start(dir, "node-p", flags(nats, nats.url(0) + "," + nats.url(1)));
             CrossbarServer s = node("node-s", nats.url(1) + "," + nats.url(0), TIMEOUT);
             FaultStreams f = new FaultStreams(p.port(), s.port(), FAULT_AFTER)) {
            NatsFaultIT.awaitSubscriptions(nats);
            f.start();
            f.awaitFaultPoint(Duration.ofSeconds(60));
            long killedAt = System.nanoTime();
            p.kill();
            f.awaitEnd(Duration.ofSeconds(60), Duration.ofSeconds(1));
            System.out.printf("fault: SIGKILL node P (the publisher's; a JVM of its own), at lossless message %d "
                            + "(lossless timeout %d s)%n%s  counters: %s%n",
                    FAULT_AFTER, TIMEOUT.toSeconds(), f.report(killedAt), counters(s));

            Matcher m = lostReason(f.lossless.close, "the subscriber on node S");
            assertEquals(f.lossless.arrived, Long.parseLong(m.group(3)), "lost after the last message it got");
            assertEquals("+", m.group(2), "its node died: more may be lost than S knows of");
            assertTrue(m.group(4).startsWith("node-s: node-p silent for 4s"), m.group(4));
            assertEquals(0, f.lossless.corrupt + f.lossless.holes + f.lossless.disorder, "what came before, whole");
            assertTrue(f.lossless.arrived >= FAULT_AFTER / 2, "the transfer was under way: " + f.lossless.arrived);
            assertEquals(-1, f.publisherClose.code(), "the publisher's connection died with its node: " + f.publisherClose);
            assertEquals(0, f.video.disorder + f.data.disorder, "live streams: nothing twice, nothing out of order");
            assertEquals(1, s.cluster().stats().broken());
        }
    }

    @Test
    void killingAReceivingNodeCostsTheOtherReceiversNothing(@TempDir Path dir) throws Exception {
        try (NatsCluster nats = NatsCluster.start(dir, 2);
             CrossbarServer a = node("node-a", nats.url(0) + "," + nats.url(1), TIMEOUT);
             CrossbarServer b = node("node-b", nats.url(1) + "," + nats.url(0), TIMEOUT);
             CrossbarProcess c = CrossbarProcess.start(dir, "node-c", flags(nats, nats.url(1) + "," + nats.url(0)));
             FaultStreams f = new FaultStreams(a.port(), b.port(), FAULT_AFTER);
             RawClient onC = new RawClient(c.port())) {
            NatsFaultIT.awaitSubscriptions(nats);
            assertTrue(onC.upgrade("/out/files/t").startsWith("HTTP/1.1 101"));
            // Node C's subscription, on its own server (the route carries one per subject).
            await("node C subscribed", Duration.ofSeconds(10),
                    () -> nats.subscriptions(1) == FaultStreams.SUBSCRIPTIONS + 1);
            AtomicLong onCArrived = new AtomicLong();
            Thread cReader = new Thread(() -> {
                try {
                    RawClient.Frame fr;
                    while ((fr = onC.readFrame(60_000)) != null && fr.opcode() != 0x8) {
                        if (fr.opcode() == 0x9) {
                            onC.send(RawClient.frame(0x8A, fr.payload(), true));
                        } else {
                            onCArrived.incrementAndGet();
                        }
                    }
                } catch (java.io.IOException e) {
                    // its node died
                }
            }, "subscriber-on-c");
            cReader.setDaemon(true);
            cReader.start();
            // C's presence must have reached A before the transfer, or nothing is kept for it.
            Thread.sleep(1500);
            f.start();
            f.awaitFaultPoint(Duration.ofSeconds(60));
            long killedAt = System.nanoTime();
            c.kill();
            await("node A keeping messages node C has not acknowledged", Duration.ofSeconds(10),
                    () -> a.cluster().losslessHeldBytes() > 8L * FaultStreams.MESSAGE);
            f.awaitEnd(Duration.ofSeconds(90), Duration.ofSeconds(1));
            System.out.printf("fault: SIGKILL node C (a receiving node; a JVM of its own) at lossless message %d; "
                            + "its subscriber had %d%n%s  counters: %s; %s%n", FAULT_AFTER, onCArrived.get(),
                    f.report(killedAt), counters(a), counters(b));

            assertTrue(f.losslessComplete(), "node B got every message, once, in order, byte-exact; " + f);
            assertNull(f.lossless.close);
            assertNull(f.publisherClose, "the publisher was not closed");
            assertEquals(FaultStreams.MESSAGES, f.losslessLocal.arrived);
            assertEquals(0, a.cluster().stats().losslessLost() + b.cluster().stats().losslessLost(), "no verdict");
            NatsFaultIT.assertLiveStreamsCounted(f, a, b);
            await("node A keeps nothing for node C any more", Duration.ofSeconds(20),
                    () -> a.cluster().losslessHeldBytes() == 0);
        }
    }
}
