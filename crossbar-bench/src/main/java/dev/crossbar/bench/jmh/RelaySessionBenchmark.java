package dev.crossbar.bench.jmh;

import dev.crossbar.core.route.RouteParser;
import dev.crossbar.core.topic.Router;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.SlowConsumerPolicy;
import dev.crossbar.server.session.RelaySession;
import dev.crossbar.server.websocket.ClientInfo;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One message through the real {@link RelaySession}s, both ends: the publisher's session reads a
 * decoded frame and hands it to the real {@link Router}; each subscriber's session writes its
 * duplicate into its channel and flushes. Channels are Netty's {@link EmbeddedChannel}s (no
 * sockets, no threads: each has its own embedded event loop, whose queued tasks this benchmark
 * runs), so an operation is the relay's own work for one message to N receivers, hand-offs
 * included, and {@code -prof gc} gives what it allocates. Unlike the deployed relay, every
 * receiver is on an event loop of its own (the embedded channel's), so the per-loop delivery
 * record is made once per receiver here instead of once per loop.
 *
 * <p>Ownership: each operation hands the publisher's session one retained duplicate of the payload
 * (the session passes it to the router, which releases it); what the subscribers' channels wrote
 * is read back and released.
 */
@State(Scope.Thread)
public class RelaySessionBenchmark extends AbstractBenchmark {

    @Param({"1", "10", "100"})
    int subscribers;

    @Param({"64", "4600"})
    int payloadBytes;

    private ByteBuf payload;
    private EmbeddedChannel publisher;
    private final List<EmbeddedChannel> receivers = new ArrayList<>();
    private ChannelGroup sessions;

    @Setup(Level.Trial)
    public void setUp() {
        Router router = new Router(new TopicRegistry());
        sessions = new DefaultChannelGroup(ImmediateEventExecutor.INSTANCE);
        RouteParser routes = new RouteParser();
        for (int i = 0; i < subscribers; i++) {
            receivers.add(member(router, routes, "/out/bench"));
        }
        publisher = member(router, routes, "/in/bench");
        payload = ByteBufAllocator.DEFAULT.directBuffer(payloadBytes).writeZero(payloadBytes);
        // The benchmark must not measure nothing: one message, one frame per subscriber, the right size.
        for (EmbeddedChannel r : receivers) {
            int frames = drain(r);
            if (frames != 0) {
                throw new IllegalStateException("a subscriber had " + frames + " frames before any message");
            }
        }
        publishOnce();
        for (EmbeddedChannel r : receivers) {
            ByteBuf frame = r.readOutbound();
            if (frame == null || frame.readableBytes() != payloadBytes + headerLength(payloadBytes)
                    || r.readOutbound() != null) {
                throw new IllegalStateException("a subscriber did not get exactly the one message");
            }
            frame.release();
        }
    }

    private EmbeddedChannel member(Router router, RouteParser routes, String path) {
        // The session needs a lifecycle in front of it, as in the relay's pipeline.
        EmbeddedChannel ch = new EmbeddedChannel(new ConnectionLifecycle(3), new RelaySession(router, sessions,
                1024 * 1024, 20L * 1024 * 1024, 1_000_000_000L, SlowConsumerPolicy.DROP, 5000,
                4096, 30_000_000_000L, 148L * 1024 * 1024));
        ch.attr(ClientInfo.KEY).set(new ClientInfo(routes.parse(path), "127.0.0.1", "jmh"));
        ch.pipeline().fireUserEventTriggered(new HandshakeComplete(path, EmptyHttpHeaders.INSTANCE, null));
        return ch;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        publisher.finishAndReleaseAll();
        for (EmbeddedChannel r : receivers) {
            r.finishAndReleaseAll();
        }
        payload.release();
    }

    /** One message from the publisher to every subscriber, written and flushed into their channels. */
    @Benchmark
    public int relay() {
        publishOnce();
        int frames = 0;
        for (EmbeddedChannel r : receivers) {
            frames += drain(r);
        }
        return frames;
    }

    private void publishOnce() {
        publisher.writeInbound(new BinaryWebSocketFrame(payload.retainedDuplicate()));
        publisher.runPendingTasks(); // the end of the publisher loop's batch: wakes the other loops
        for (EmbeddedChannel r : receivers) {
            r.runPendingTasks(); // that loop's drain: RelaySession.deliver, write, flush
        }
    }

    /** Releases what {@code ch} wrote; returns how many frames. */
    private int drain(EmbeddedChannel ch) {
        int n = 0;
        Object m;
        while ((m = ch.readOutbound()) != null) {
            ReferenceCountUtil.release(m);
            n++;
        }
        return n;
    }

    private static int headerLength(int payloadLength) {
        return payloadLength < 126 ? 2 : payloadLength <= 0xFFFF ? 4 : 10;
    }
}
