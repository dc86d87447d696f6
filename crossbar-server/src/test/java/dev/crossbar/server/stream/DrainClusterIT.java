package dev.crossbar.server.stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.testing.CrossbarCluster;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RawClient;
import io.netty.util.ResourceLeakDetector;
import java.net.URI;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A rolling restart on a NATS cluster: node a is drained while its clients talk to node b's.
 * Ordinary clients are closed with 1012 and carry on through node b once they reconnect there; a
 * lossless transfer in flight from node a to a subscriber on node b finishes, byte for byte,
 * before node a lets its publisher go.
 */
class DrainClusterIT {

    private static final int MESSAGE = 256 * 1024;
    private static final int MESSAGES = 64;

    @Test
    void clientsMoveToTheOtherNodeAndALosslessTransferInFlightCompletes(@TempDir Path dir) throws Exception {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE); // 16 MiB unmasked: sampled, as ClusterIT's burst
        RoutingTable rules = new RoutingTable(RoutingTable.parseAll(List.of("/files/**:slow=backpressure")));
        try (CrossbarCluster c = CrossbarCluster.start(dir, (i, b) -> b.routing(rules).drainTimeout(Duration.ofSeconds(60)));
             JdkClient chatA = JdkClient.connect(c.ws(0, "/chat"));
             JdkClient chatB = JdkClient.connect(c.ws(1, "/chat"));
             RawClient pub = new RawClient(c.node(0).port());
             RawClient sub = new RawClient(c.node(1).port(), 64 * 1024)) {
            assertTrue(sub.upgrade("/out/files/z").startsWith("HTTP/1.1 101"));
            assertTrue(pub.upgrade("/in/files/z").startsWith("HTTP/1.1 101"));
            c.awaitSubscriptions(5); // /chat on both nodes, the stream on node b, its hold and ack subjects on node a
            chatA.sendText("hello from a");
            assertEquals("hello from a", chatB.take(Duration.ofSeconds(10)).string(), "the cluster carries the chat");

            MessageDigest sent = MessageDigest.getInstance("SHA-256");
            AtomicReference<Throwable> failed = new AtomicReference<>();
            byte[] block = new byte[MESSAGE];
            new SplittableRandom(47).nextBytes(block);
            Thread publisher = new Thread(() -> {
                try {
                    for (int i = 0; i < MESSAGES; i++) {
                        byte[] m = block.clone();
                        m[0] = (byte) i;
                        sent.update(m);
                        pub.send(RawClient.frame(0x82, m, true));
                    }
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                }
            }, "publisher");
            // A slow reader on node b: the transfer is still in flight when node a drains.
            PacedReader reader = new PacedReader(sub, MESSAGES, MESSAGE, 4e6, failed);
            publisher.start();
            reader.start();
            Thread.sleep(500);

            c.node(0).drain(c.node(0).config().drainTimeout());
            assertEquals(1012, chatA.awaitClose(Duration.ofSeconds(10)), "node a's chat client is told to go");
            // It reconnects, to the node still serving, and the chat carries on.
            try (JdkClient moved = JdkClient.connect(c.ws(1, "/chat"))) {
                moved.sendText("hello again");
                assertEquals("hello again", chatB.take(Duration.ofSeconds(10)).string());
            }

            publisher.join(120_000);
            reader.join(120_000);
            if (failed.get() != null) {
                throw new AssertionError("a client failed", failed.get());
            }
            assertEquals(MESSAGES, reader.messages, "the subscriber on node b got the whole transfer");
            assertArrayEquals(sent.digest(), reader.digest.digest(), "every byte, in order");
            RawClient.Frame close = pub.readUntilClose(15_000);
            assertTrue(close != null, "node a closed its publisher once the transfer was done");
            assertEquals(1012, close.closeCode(), close.closeReason());
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }
}
