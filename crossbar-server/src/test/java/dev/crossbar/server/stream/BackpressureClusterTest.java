package dev.crossbar.server.stream;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.schema.OneToMany;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.server.cluster.NatsStats;
import dev.crossbar.server.testing.CrossbarCluster;
import dev.crossbar.server.testing.RawClient;
import io.netty.util.ResourceLeakDetector;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code slow=backpressure} across nodes: a slow subscriber on one node holds back a publisher on
 * another (the hold travels over NATS), and no message is lost on the way: not by the publishing
 * node's link, not by the receiving node, not by the slow subscriber.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class BackpressureClusterTest {

    private static final int MESSAGE = 1024 * 1024;
    private static final int MESSAGES = 256;
    private static final double SLOW_RATE = 24e6;

    @Test
    void aSlowSubscriberOnAnotherNodeHoldsThePublisherBackAndNothingIsLost(@TempDir Path dir) throws Exception {
        // 256 MiB through two nodes: paranoid leak detection records a stack trace for every few bytes
        // the frame decoder unmasks (see ClusterTest's burst). Sampled here; other tests keep paranoid.
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
        RoutingTable rules = new RoutingTable(RoutingTable.parseAll(List.of("/files/**:slow=backpressure")));
        try (CrossbarCluster c = CrossbarCluster.start(dir, (i, b) -> b.routing(rules));
             RawClient pub = new RawClient(c.node(0).port());
             RawClient fast = new RawClient(c.node(0).port());
             RawClient slow = new RawClient(c.node(1).port(), 64 * 1024)) {
            assertTrue(fast.upgrade("/out/files/x").startsWith("HTTP/1.1 101"));
            assertTrue(slow.upgrade("/out/files/x").startsWith("HTTP/1.1 101"));
            assertTrue(pub.upgrade("/in/files/x").startsWith("HTTP/1.1 101"));
            c.awaitSubscriptions(2); // the topic (node b) and its hold subject (node a, which has the sender)
            await("publisher and fast subscriber on node a", Duration.ofSeconds(10),
                    () -> topicOn(c, 0) != null && topicOn(c, 0).size() == 2);

            byte[] block = new byte[MESSAGE];
            new SplittableRandom(7).nextBytes(block);
            MessageDigest sent = MessageDigest.getInstance("SHA-256");
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread publisher = new Thread(() -> {
                try {
                    for (int i = 0; i < MESSAGES; i++) {
                        byte[] m = block.clone();
                        m[0] = (byte) i;
                        m[1] = (byte) (i >> 8);
                        sent.update(m);
                        pub.send(RawClient.frame(0x82, m, true));
                    }
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                }
            }, "publisher");
            Reader fastReader = new Reader(fast, 0, failed);
            Reader slowReader = new Reader(slow, SLOW_RATE, failed);
            publisher.start();
            fastReader.start();
            slowReader.start();
            publisher.join(180_000);
            fastReader.join(60_000);
            slowReader.join(60_000);
            if (failed.get() != null) {
                throw new AssertionError("a client failed", failed.get());
            }
            byte[] expected = sent.digest();
            assertEquals(MESSAGES, fastReader.messages);
            assertEquals(MESSAGES, slowReader.messages, "the subscriber on node b got every message");
            assertArrayEquals(expected, fastReader.digest.digest());
            assertArrayEquals(expected, slowReader.digest.digest(), "every byte, in order");
            NatsStats a = c.broker(0).stats();
            NatsStats b = c.broker(1).stats();
            assertEquals(0, a.droppedOut(), "node a's link dropped nothing");
            assertEquals(0, b.lostIn() + b.droppedIn() + b.rejectedIn(), "node b lost nothing");
            assertTrue(topicOn(c, 0).holdBack().heldBy(System.nanoTime()).containsKey("node-b"),
                    "node a's publisher was held back by node b");
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }

    private static Topic topicOn(CrossbarCluster c, int node) {
        return c.node(node).topics().get(new TopicKey(OneToMany.INSTANCE, "files/x"));
    }

    /** Reads whole 1 MiB binary messages, hashing them in order, no faster than {@code rate} (0: at once). */
    private static final class Reader extends Thread {
        final RawClient client;
        final double rate;
        final AtomicReference<Throwable> failed;
        final MessageDigest digest;
        volatile int messages;

        Reader(RawClient client, double rate, AtomicReference<Throwable> failed) throws Exception {
            super("reader");
            this.client = client;
            this.rate = rate;
            this.failed = failed;
            this.digest = MessageDigest.getInstance("SHA-256");
        }

        @Override
        public void run() {
            try {
                long start = System.nanoTime();
                while (messages < MESSAGES) {
                    RawClient.Frame f = client.readFrame(30_000);
                    if (f == null) {
                        throw new AssertionError("no message " + messages + " within 30 s");
                    }
                    if (f.opcode() == 0x9) {
                        client.send(RawClient.frame(0x8A, f.payload(), true));
                        continue;
                    }
                    if (f.opcode() != 0x2 || !f.fin() || f.payload().length != MESSAGE) {
                        throw new AssertionError("message " + messages + ": opcode " + f.opcode() + ", "
                                + f.payload().length + " bytes");
                    }
                    digest.update(f.payload());
                    messages++;
                    if (rate > 0) {
                        long wait = start + (long) ((double) messages * MESSAGE / rate * 1e9) - System.nanoTime();
                        if (wait > 0) {
                            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                        }
                    }
                }
            } catch (Throwable e) {
                failed.compareAndSet(null, e);
            }
        }
    }
}
