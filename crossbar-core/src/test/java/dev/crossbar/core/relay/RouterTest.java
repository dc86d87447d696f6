package dev.crossbar.core.relay;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.topic.Router;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RouterTest {

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private final EventExecutor loopA = new DefaultEventExecutor();
    private final EventExecutor loopB = new DefaultEventExecutor();
    private final RouteParser parser = new RouteParser();
    private final TopicRegistry registry = new TopicRegistry();
    private final Router router = new Router(registry);

    @AfterEach
    void stop() {
        loopA.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        loopB.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }

    private ByteBuf payload(String s) {
        ByteBuf b = alloc.directBuffer();
        b.writeCharSequence(s, StandardCharsets.UTF_8);
        return b;
    }

    private void publishOnLoop(RecordingMember sender, Topic topic, boolean text, String s) throws Exception {
        sender.loop.submit(() -> router.publish(sender, topic, text, payload(s), alloc)).get(5, TimeUnit.SECONDS);
    }

    private static void settle(EventExecutor... loops) throws Exception {
        for (int i = 0; i < 3; i++) {
            for (EventExecutor l : loops) {
                l.submit(() -> { }).get(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void manyToManyReachesEveryOtherMemberAcrossLoopsWithoutEcho() throws Exception {
        RecordingMember a = new RecordingMember(loopA, parser.parse("/room"));
        RecordingMember b = new RecordingMember(loopA, parser.parse("/room"));
        RecordingMember c = new RecordingMember(loopB, parser.parse("/room"));
        Topic topic = router.join(a);
        router.join(b);
        router.join(c);

        publishOnLoop(a, topic, true, "hi");
        settle(loopA, loopB);

        assertEquals(0, a.received.size());
        assertEquals(1, b.received.size());
        assertEquals(1, c.received.size());
        // Frame bytes: FIN|text, length 2, "hi" (unmasked server frame).
        assertArrayEquals(new byte[] {(byte) 0x81, 2, 'h', 'i'}, b.received.get(0));
        assertEquals(0, b.wrongThread.get() + c.wrongThread.get());
        assertEquals(2, topic.totals()[2]);
    }

    @Test
    void theOtherLoopsAreWokenBeforeTheSendersLoopFlushesItsOwnReceivers() throws Exception {
        RecordingMember a = new RecordingMember(loopA, parser.parse("/order"));
        RecordingMember sameLoop = new RecordingMember(loopA, parser.parse("/order"));
        RecordingMember otherLoop = new RecordingMember(loopB, parser.parse("/order"));
        Topic topic = router.join(a);
        router.join(sameLoop);
        router.join(otherLoop);
        // Loop A's flush waits (bounded) for loop B's receiver: it only gets the message if loop
        // B was woken before loop A's flushes, which are a system call each in the relay.
        AtomicBoolean otherLoopHadItFirst = new AtomicBoolean();
        sameLoop.beforeFlush = () -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (otherLoop.received.isEmpty() && System.nanoTime() < deadline) {
                LockSupport.parkNanos(100_000);
            }
            otherLoopHadItFirst.set(!otherLoop.received.isEmpty());
        };

        publishOnLoop(a, topic, false, "x");
        settle(loopA, loopB);

        assertEquals(1, sameLoop.received.size());
        assertEquals(1, otherLoop.received.size());
        assertTrue(otherLoopHadItFirst.get(), "loop B wrote its receiver while loop A flushed");
    }

    @Test
    void aFailingReceiverNeitherCostsTheOthersTheirMessageNorStopsTheLoop() throws Exception {
        RecordingMember pub = new RecordingMember(loopA, parser.parse("/in/iso"));
        RecordingMember failing = new RecordingMember(loopB, parser.parse("/out/iso"));
        RecordingMember failingFlush = new RecordingMember(loopB, parser.parse("/out/iso"));
        RecordingMember healthy = new RecordingMember(loopB, parser.parse("/out/iso"));
        Topic topic = router.join(pub);
        router.join(failing);
        router.join(failingFlush);
        router.join(healthy);
        failing.failDeliver = true;
        failingFlush.failFlush = true;

        for (int i = 0; i < 3; i++) {
            publishOnLoop(pub, topic, false, "m" + i);
            settle(loopA, loopB);
        }
        // Every message reached the healthy receiver: neither the throwing deliver (it comes first
        // in the group) nor the throwing flush cost it a message or stopped loop B's drains.
        assertEquals(3, healthy.received.size());
        assertEquals(3, failingFlush.received.size());
        assertEquals(0, failing.received.size());
        assertTrue(healthy.flushes.get() >= 1, "healthy receiver flushed");
    }

    @Test
    void oneToManyDropsSubscriberSendsAndCountsThem() throws Exception {
        RecordingMember pub = new RecordingMember(loopA, parser.parse("/in/cam"));
        RecordingMember sub1 = new RecordingMember(loopA, parser.parse("/out/cam"));
        RecordingMember sub2 = new RecordingMember(loopB, parser.parse("/out/cam"));
        Topic topic = router.join(pub);
        router.join(sub1);
        router.join(sub2);

        publishOnLoop(pub, topic, false, "frame");
        publishOnLoop(sub1, topic, false, "reply");
        settle(loopA, loopB);

        assertEquals(1, sub1.received.size());
        assertEquals(1, sub2.received.size());
        assertEquals(0, pub.received.size());
        assertEquals((byte) 0x82, sub2.received.get(0)[0]);
        assertEquals(1, sub1.stats.refused());
    }

    @Test
    void aMemberThatMayNotSendIsRefusedAndCountedButStillReceives() throws Exception {
        RecordingMember reader = new RecordingMember(loopA, parser.parse("/room"));
        RecordingMember writer = new RecordingMember(loopB, parser.parse("/room"));
        reader.maySend = false;
        Topic topic = router.join(reader);
        router.join(writer);

        publishOnLoop(reader, topic, true, "dropped");
        publishOnLoop(writer, topic, true, "relayed");
        settle(loopA, loopB);

        assertEquals(0, writer.received.size());
        assertEquals(1, reader.received.size());
        assertEquals(1, reader.stats.refused());
        assertEquals(0, writer.stats.refused());
    }

    @Test
    void burstIsFlushedOncePerBatchNotOncePerMessage() throws Exception {
        RecordingMember pub = new RecordingMember(loopA, parser.parse("/in/burst"));
        RecordingMember sub = new RecordingMember(loopB, parser.parse("/out/burst"));
        Topic topic = router.join(pub);
        router.join(sub);
        // Block loopB so the burst queues up, then let it drain in one go.
        java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        loopB.execute(() -> {
            try {
                gate.await(30, TimeUnit.SECONDS); // bounded: a failed test must not block the loop, or its shutdown
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        loopA.submit(() -> {
            for (int i = 0; i < 500; i++) {
                router.publish(pub, topic, false, payload("m" + i), alloc);
            }
        }).get(5, TimeUnit.SECONDS);
        gate.countDown();
        settle(loopA, loopB);

        assertEquals(500, sub.received.size());
        for (int i = 0; i < 500; i++) {
            String body = new String(sub.received.get(i), 2, sub.received.get(i).length - 2, StandardCharsets.UTF_8);
            assertEquals("m" + i, body);
        }
        assertEquals(1, sub.flushes.get(), "one flush for the whole queued burst");
    }

    @Test
    void fullBacklogRefusesWholeMessagesAndCountsDrops() throws Exception {
        Router small = new Router(registry, 100);
        RecordingMember pub = new RecordingMember(loopA, parser.parse("/in/small"));
        RecordingMember sub = new RecordingMember(loopB, parser.parse("/out/small"));
        Topic topic = small.join(pub);
        small.join(sub);
        java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        loopB.execute(() -> {
            try {
                gate.await(30, TimeUnit.SECONDS); // bounded: a failed test must not block the loop, or its shutdown
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        loopA.submit(() -> {
            for (int i = 0; i < 10; i++) {
                small.publish(pub, topic, false, payload("x".repeat(40)), alloc);
            }
        }).get(5, TimeUnit.SECONDS);
        assertTrue(small.backlogged(), "past half its bound: a sender that can wait (HTTP ingest) should");
        gate.countDown();
        settle(loopA, loopB);

        // 42-byte frames in a 100-byte backlog: two fit, eight are dropped whole.
        assertEquals(2, sub.received.size());
        assertEquals(8, sub.stats.dropped());
        assertEquals(0, small.backlogBytes());
        assertFalse(small.backlogged());
    }

    @Test
    void lastLeaveRemovesTopic() {
        RecordingMember a = new RecordingMember(loopA, parser.parse("/t"));
        RecordingMember b = new RecordingMember(loopB, parser.parse("/t"));
        router.join(a);
        router.join(b);
        assertEquals(1, registry.size());
        router.leave(a);
        assertEquals(1, registry.size());
        router.leave(b);
        router.leave(b);
        assertEquals(0, registry.size());
    }

    @Test
    void largeFramesUseExtendedLengths() throws Exception {
        RecordingMember pub = new RecordingMember(loopA, parser.parse("/in/big"));
        RecordingMember sub = new RecordingMember(loopA, parser.parse("/out/big"));
        Topic topic = router.join(pub);
        router.join(sub);
        publishOnLoop(pub, topic, false, "y".repeat(300));
        publishOnLoop(pub, topic, false, "z".repeat(70_000));
        settle(loopA);
        byte[] mid = sub.received.get(0);
        assertEquals(126, mid[1]);
        assertEquals(300, ((mid[2] & 0xff) << 8) | (mid[3] & 0xff));
        byte[] big = sub.received.get(1);
        assertEquals(127, big[1]);
        assertEquals(70_000 + 10, big.length);
        assertTrue(big[9] != 0 || big[8] != 0);
    }
}
