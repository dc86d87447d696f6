package dev.crossbar.core.relay;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.broker.Broker;
import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.topic.Router;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The broker seam: the registry reports interest exactly while a topic has local receivers, in
 * order per topic even under concurrent churn; the router hands each sendable message to the broker
 * once, whatever the local receiver count; a message from another node reaches every local receiver.
 */
class BrokerSeamTest {

    /** A broker that records what it is told; payloads are copied and released at once. */
    static final class RecordingBroker implements Broker {
        final List<String> events = new CopyOnWriteArrayList<>();
        final Map<TopicKey, List<Boolean>> interestByKey = new ConcurrentHashMap<>();
        final List<String> published = new CopyOnWriteArrayList<>();

        @Override
        public void interest(TopicKey topic) {
            events.add("+" + topic);
            interestByKey.computeIfAbsent(topic, k -> new CopyOnWriteArrayList<>()).add(true);
        }

        @Override
        public void noInterest(TopicKey topic) {
            events.add("-" + topic);
            interestByKey.computeIfAbsent(topic, k -> new CopyOnWriteArrayList<>()).add(false);
        }

        @Override
        public void publish(TopicKey topic, boolean text, ByteBuf payload) {
            try {
                published.add(topic + (text ? " text " : " binary ") + payload.toString(StandardCharsets.UTF_8));
            } finally {
                payload.release();
            }
        }
    }

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private final EventExecutor loopA = new DefaultEventExecutor();
    private final EventExecutor loopB = new DefaultEventExecutor();
    private final RouteParser parser = new RouteParser();
    private final RecordingBroker broker = new RecordingBroker();
    private final TopicRegistry registry = new TopicRegistry(broker);
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

    private static void settle(EventExecutor... loops) throws Exception {
        for (int i = 0; i < 3; i++) {
            for (EventExecutor l : loops) {
                l.submit(() -> { }).get(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void interestFollowsReceiversNotMembers() {
        RecordingMember pub = new RecordingMember(loopA, parser.parse("/in/cam"));
        RecordingMember sub1 = new RecordingMember(loopA, parser.parse("/out/cam"));
        RecordingMember sub2 = new RecordingMember(loopB, parser.parse("/out/cam"));
        router.join(pub);
        assertEquals(List.of(), broker.events, "a publisher alone receives nothing, so no interest");
        router.join(sub1);
        router.join(sub2);
        router.leave(sub1);
        assertEquals(List.of("+1:n cam"), broker.events);
        router.leave(sub2);
        assertEquals(List.of("+1:n cam", "-1:n cam"), broker.events);
        router.leave(pub);
        assertEquals(0, registry.size());
        assertEquals(2, broker.events.size());
    }

    @Test
    void eachSendableMessageGoesToTheBrokerOnceAfterLocalFanOut() throws Exception {
        RecordingMember a = new RecordingMember(loopA, parser.parse("/room"));
        RecordingMember b = new RecordingMember(loopA, parser.parse("/room"));
        RecordingMember c = new RecordingMember(loopB, parser.parse("/room"));
        RecordingMember pub = new RecordingMember(loopB, parser.parse("/in/solo"));
        RecordingMember sub = new RecordingMember(loopB, parser.parse("/out/muted"));
        Topic room = router.join(a);
        router.join(b);
        router.join(c);
        Topic solo = router.join(pub);
        Topic muted = router.join(sub);

        loopA.submit(() -> router.publish(a, room, true, payload("hi"), alloc)).get(5, TimeUnit.SECONDS);
        loopB.submit(() -> router.publish(pub, solo, false, payload("frame"), alloc)).get(5, TimeUnit.SECONDS);
        loopB.submit(() -> router.publish(sub, muted, false, payload("nope"), alloc)).get(5, TimeUnit.SECONDS);
        settle(loopA, loopB);

        assertEquals(List.of("n:n /room text hi", "1:n solo binary frame"), broker.published,
                "once per message, with or without local receivers; never from a subscriber");
        assertEquals(1, b.received.size());
        assertEquals(1, c.received.size());
        assertEquals(0, a.received.size());
    }

    @Test
    void remoteMessagesReachEveryLocalReceiver() throws Exception {
        RecordingMember a = new RecordingMember(loopA, parser.parse("/room"));
        RecordingMember b = new RecordingMember(loopB, parser.parse("/room"));
        RecordingMember pub = new RecordingMember(loopA, parser.parse("/in/cam"));
        RecordingMember sub = new RecordingMember(loopB, parser.parse("/out/cam"));
        router.join(a);
        router.join(b);
        router.join(pub);
        router.join(sub);

        // As a broker hands them over: heap bytes, which the router copies once into direct memory
        // rather than letting every receiver's socket write copy them again.
        assertEquals(2, router.deliver(a.route.topic(), false,
                Unpooled.wrappedBuffer("from afar".getBytes(StandardCharsets.UTF_8))));
        assertEquals(1, router.deliver(sub.route.topic(), true, payload("t")));
        assertEquals(0, router.deliver(new TopicKey(a.route.schema(), "/nobody"), true, payload("lost")));
        settle(loopA, loopB);

        byte[] expected = new byte[11];
        expected[0] = (byte) 0x82;
        expected[1] = 9;
        System.arraycopy("from afar".getBytes(StandardCharsets.UTF_8), 0, expected, 2, 9);
        assertEquals(1, a.received.size());
        assertArrayEquals(expected, a.received.get(0));
        assertArrayEquals(expected, b.received.get(0));
        assertArrayEquals(new byte[] {(byte) 0x81, 1, 't'}, sub.received.get(0));
        assertEquals(0, pub.received.size());
        assertEquals(0, a.heapFrames.get() + b.heapFrames.get() + sub.heapFrames.get());
        assertTrue(broker.published.isEmpty(), "remote messages never go back to the broker");
    }

    @Test
    void interestChangesAlternatePerTopicUnderConcurrentChurn() throws Exception {
        int threads = 4;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                try {
                    start.await(30, TimeUnit.SECONDS);
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    for (int i = 0; i < 5_000; i++) {
                        String path = switch (r.nextInt(3)) {
                            case 0 -> "/in/s" + r.nextInt(3);
                            case 1 -> "/out/s" + r.nextInt(3);
                            default -> "/room" + r.nextInt(3);
                        };
                        RecordingMember m = new RecordingMember(loopA, parser.parse(path));
                        router.join(m);
                        router.leave(m);
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            workers.add(w);
            w.start();
        }
        start.countDown();
        for (Thread w : workers) {
            w.join(30_000);
        }
        assertEquals(List.of(), failures);
        assertEquals(0, registry.size());
        assertTrue(broker.interestByKey.size() >= 6, "both schemas saw interest: " + broker.interestByKey.keySet());
        for (Map.Entry<TopicKey, List<Boolean>> e : broker.interestByKey.entrySet()) {
            List<Boolean> seq = e.getValue();
            for (int i = 0; i < seq.size(); i++) {
                assertEquals(i % 2 == 0, seq.get(i), "interest changes for " + e.getKey() + " must alternate, from +");
            }
            assertEquals(0, seq.size() % 2, "interest for " + e.getKey() + " must end withdrawn");
            assertTrue(!e.getKey().name().startsWith("s") || e.getKey().schema().name().equals("1:n"));
        }
    }
}
