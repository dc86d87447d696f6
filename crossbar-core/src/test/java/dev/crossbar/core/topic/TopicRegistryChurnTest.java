package dev.crossbar.core.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.relay.LoopGroup;
import dev.crossbar.core.relay.Member;
import dev.crossbar.core.relay.PreparedFrame;
import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.stats.ConnectionStats;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TopicRegistryChurnTest {

    private record Stub(Route route, ConnectionStats stats, EventExecutor executor) implements Member {
        Stub(Route route, ConnectionStats stats) {
            this(route, stats, ImmediateEventExecutor.INSTANCE);
        }

        @Override
        public boolean deliver(PreparedFrame frame) {
            return false;
        }

        @Override
        public void flush() {
        }
    }

    @Test
    void concurrentJoinsAndLeavesLeaveNoTopicBehind() throws Exception {
        TopicRegistry registry = new TopicRegistry();
        RouteParser parser = new RouteParser();
        int threads = 4;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread w = new Thread(() -> {
                try {
                    start.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 20_000; i++) {
                    Member m = new Stub(parser.parse("/t" + (i % 7) + (id % 2 == 0 ? "" : "/x")), ConnectionStats.startingNow());
                    Topic topic = registry.join(m).topic();
                    if (!List.of(topic.members()).contains(m)) {
                        throw new AssertionError("joined a topic without being in it");
                    }
                    registry.leave(m);
                }
            });
            workers.add(w);
            w.start();
        }
        start.countDown();
        for (Thread w : workers) {
            w.join(60_000);
            if (w.isAlive()) {
                throw new AssertionError("a churn worker still running after 60 s");
            }
        }
        assertEquals(0, registry.size());
    }

    @Test
    void viewsFollowEveryJoinAndLeaveGroupedByLoop() {
        TopicRegistry registry = new TopicRegistry();
        RouteParser parser = new RouteParser();
        EventExecutor loopA = new DefaultEventExecutor();
        EventExecutor loopB = new DefaultEventExecutor();
        try {
            Stub publisher = new Stub(parser.parse("/in/cam"), ConnectionStats.startingNow(), loopA);
            Topic topic = registry.join(publisher).topic();
            assertEquals(0, topic.groups().length, "a publisher alone receives nothing");
            List<Stub> viewers = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                Stub v = new Stub(parser.parse("/out/cam"), ConnectionStats.startingNow(), i % 2 == 0 ? loopA : loopB);
                viewers.add(v);
                assertSame(topic, registry.join(v).topic());
                if (i % 100 == 0) {
                    // Read between joins, as the send path does: each read sees every join before it.
                    assertEquals(i + 1, Arrays.stream(topic.groups()).mapToInt(g -> g.members().length).sum());
                }
            }
            assertEquals(1001, topic.members().length);
            for (LoopGroup g : topic.groups()) {
                assertEquals(500, g.members().length);
                assertTrue(Arrays.stream(g.members()).allMatch(m -> m.executor() == g.loop()), "grouped by loop");
                assertFalse(Arrays.asList(g.members()).contains(publisher), "the publisher is no receiver");
            }
            for (Stub v : viewers.subList(0, 999)) {
                registry.leave(v);
            }
            LoopGroup[] left = topic.groups();
            assertEquals(1, left.length);
            assertSame(viewers.get(999), left[0].members()[0]);
            assertTrue(topic.hasReceivers());
            registry.leave(viewers.get(999));
            assertEquals(0, topic.groups().length);
            assertFalse(topic.hasReceivers());
            assertEquals(1, topic.members().length);
            registry.leave(publisher);
            assertEquals(0, registry.size());
        } finally {
            loopA.shutdownGracefully();
            loopB.shutdownGracefully();
        }
    }
}
