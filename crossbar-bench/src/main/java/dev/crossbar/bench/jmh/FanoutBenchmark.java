package dev.crossbar.bench.jmh;

import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.topic.Router;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The core's fan-out hand-off alone: messages from a publisher to N subscribers through the real
 * {@link Router}, topic and per-loop queues, to subscribers on real event loops that are
 * <em>stand-in members</em> ({@link DiscardMember}: they take and release a duplicate and count it,
 * but are not {@code RelaySession}, write to no channel and run no pipeline). What a relayed message
 * costs and allocates in the real sessions is {@link RelaySessionBenchmark}'s to measure. An
 * invocation publishes a burst of {@value #BURST} messages and waits until every subscriber has had
 * every delivery; the score is per message (JMH divides by the burst), with the cross-thread hand-off
 * amortised over a burst as it is under load. Divide by N for the cost per delivery.
 */
@State(Scope.Benchmark)
@OperationsPerInvocation(FanoutBenchmark.BURST)
public class FanoutBenchmark extends AbstractBenchmark {

    static final int BURST = 32;

    @Param({"1", "10", "100", "1000"})
    int subscribers;

    @Param({"64", "4600"})
    int payloadBytes;

    /** Subscriber event loops; 1 leaves the other core of a 2-core machine to the benchmark thread. */
    @Param({"1"})
    int loops;

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private final AtomicInteger remaining = new AtomicInteger();
    private EventLoopGroup group;
    private Router router;
    private Topic topic;
    private DiscardMember publisher;
    private ByteBuf payload;

    @Setup(Level.Trial)
    public void setUp() {
        group = new MultiThreadIoEventLoopGroup(loops, NioIoHandler.newFactory());
        RouteParser routes = new RouteParser();
        router = new Router(new TopicRegistry());
        publisher = new DiscardMember(group.next(), routes.parse("/in/bench"), remaining);
        topic = router.join(publisher);
        for (int i = 0; i < subscribers; i++) {
            router.join(new DiscardMember(group.next(), routes.parse("/out/bench"), remaining));
        }
        payload = alloc.directBuffer(payloadBytes);
        payload.writeZero(payloadBytes);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        payload.release();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Benchmark
    public int publish() {
        remaining.set(BURST * subscribers);
        for (int i = 0; i < BURST; i++) {
            router.publish(publisher, topic, false, payload.retainedDuplicate(), alloc);
        }
        int left;
        while ((left = remaining.get()) > 0) {
            // Yield rather than spin: on two cores the loop thread needs this one's CPU to finish.
            Thread.yield();
        }
        return left;
    }
}
