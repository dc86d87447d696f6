package dev.crossbar.bench.storm;

import dev.crossbar.bench.jmh.DiscardMember;
import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.topic.Router;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicRegistry;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalIoHandler;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Measures a storm of subscribers joining one topic, then leaving it, on real event loops: each
 * join and leave runs on its member's own loop, as a session's does, while a publisher sends 30
 * messages a second to the topic. Reported: the time until all have joined (left), the longest
 * single join (leave) call, which is how long one blocks its event loop, and how late a 1 ms
 * ticker on every loop ran (all joins are queued at once, so this is the storm's whole backlog). The topic code is the relay's own; members discard what they get.
 *
 * <pre>java -cp crossbar-bench/target/benchmarks.jar dev.crossbar.bench.storm.JoinStorm [members] [loops] [repeats]</pre>
 */
public final class JoinStorm {

    private JoinStorm() {
    }

    public static void main(String[] args) throws Exception {
        int members = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int loops = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int repeats = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(loops, LocalIoHandler.newFactory());
        try {
            for (int r = 0; r < repeats; r++) {
                run(group, members, r);
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private static void run(EventLoopGroup group, int n, int repeat) throws Exception {
        Router router = new Router(new TopicRegistry());
        RouteParser routes = new RouteParser();
        Route out = routes.parse("/out/storm");
        List<EventLoop> loops = new ArrayList<>();
        group.forEach(e -> loops.add((EventLoop) e));

        AtomicLong maxLateNanos = new AtomicLong();
        AtomicInteger discarded = new AtomicInteger();
        List<ScheduledFuture<?>> tickers = new ArrayList<>();
        for (EventLoop loop : loops) {
            long[] expected = {System.nanoTime() + 1_000_000};
            tickers.add(loop.scheduleAtFixedRate(() -> {
                long now = System.nanoTime();
                maxLateNanos.accumulateAndGet(now - expected[0], Math::max);
                expected[0] = now + 1_000_000;
            }, 1, 1, TimeUnit.MILLISECONDS));
        }
        DiscardMember publisher = new DiscardMember(loops.get(0), routes.parse("/in/storm"), discarded);
        Topic topic = router.join(publisher);
        ScheduledFuture<?> publishing = loops.get(0).scheduleAtFixedRate(() -> router.publish(publisher, topic, false,
                Unpooled.directBuffer(4600).writeZero(4600), ByteBufAllocator.DEFAULT), 0, 33, TimeUnit.MILLISECONDS);
        Thread.sleep(200);
        maxLateNanos.set(0);

        List<DiscardMember> storm = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            storm.add(new DiscardMember(loops.get(i % loops.size()), out, discarded));
        }
        CountDownLatch joined = new CountDownLatch(n);
        AtomicLong longestJoin = new AtomicLong();
        long start = System.nanoTime();
        for (DiscardMember m : storm) {
            m.executor().execute(() -> {
                long t0 = System.nanoTime();
                router.join(m);
                longestJoin.accumulateAndGet(System.nanoTime() - t0, Math::max);
                joined.countDown();
            });
        }
        if (!joined.await(120, TimeUnit.SECONDS)) {
            throw new IllegalStateException("joins did not finish in 120 s");
        }
        long joinNanos = System.nanoTime() - start;
        long joinStall = maxLateNanos.getAndSet(0);

        CountDownLatch left = new CountDownLatch(n);
        AtomicLong longestLeave = new AtomicLong();
        start = System.nanoTime();
        for (DiscardMember m : storm) {
            m.executor().execute(() -> {
                long t0 = System.nanoTime();
                router.leave(m);
                longestLeave.accumulateAndGet(System.nanoTime() - t0, Math::max);
                left.countDown();
            });
        }
        if (!left.await(120, TimeUnit.SECONDS)) {
            throw new IllegalStateException("leaves did not finish in 120 s");
        }
        long leaveNanos = System.nanoTime() - start;
        long leaveStall = maxLateNanos.get();
        publishing.cancel(false);
        tickers.forEach(t -> t.cancel(false));
        router.leave(publisher);
        long delivered = storm.stream().mapToLong(m -> m.stats().messagesOut()).sum();
        System.out.printf("{\"kind\":\"join-storm\",\"repeat\":%d,\"members\":%d,\"loops\":%d,\"joinMs\":%.1f,"
                        + "\"longestJoinMs\":%.3f,\"joinTickerLateMs\":%.1f,\"leaveMs\":%.1f,\"longestLeaveMs\":%.3f,"
                        + "\"leaveTickerLateMs\":%.1f,\"delivered\":%d}%n",
                repeat, n, loops.size(), joinNanos / 1e6, longestJoin.get() / 1e6, joinStall / 1e6,
                leaveNanos / 1e6, longestLeave.get() / 1e6, leaveStall / 1e6, delivered);
    }
}
