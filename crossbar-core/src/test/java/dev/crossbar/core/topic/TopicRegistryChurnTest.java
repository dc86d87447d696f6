package dev.crossbar.core.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.crossbar.core.relay.PreparedFrame;
import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.stats.ConnectionStats;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TopicRegistryChurnTest {

    private record Stub(Route route, ConnectionStats stats) implements Member {
        @Override
        public EventExecutor executor() {
            return ImmediateEventExecutor.INSTANCE;
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
                    Topic topic = registry.join(m);
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
}
