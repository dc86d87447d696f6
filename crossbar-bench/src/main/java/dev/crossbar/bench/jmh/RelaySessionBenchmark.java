package dev.crossbar.bench.jmh;

import dev.crossbar.core.broker.Broker;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.topic.Router;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.http.Draining;
import dev.crossbar.server.http.HandshakeFailures;
import dev.crossbar.server.pair.SessionRegistry;
import dev.crossbar.server.transport.ConnectionLimiter;
import dev.crossbar.server.transport.CrossbarInitializer;
import dev.crossbar.server.websocket.ClientInfo;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One message relayed by the real server pipeline: a masked client frame goes into the publisher's
 * connection, through the pipeline {@link CrossbarInitializer} builds (after a real HTTP upgrade:
 * the relay's message reader, lifecycle, {@code RelaySession}), the real
 * {@link Router} and fan-out, and out of every receiver's {@code RelaySession} as a written and
 * flushed frame. {@code -prof gc} gives what one message allocates; divide by {@code receivers}
 * for a delivery.
 *
 * <p>Connections are Netty's {@link EmbeddedChannel}s: no sockets and no threads of their own, so
 * all the work and all the allocation is the benchmark thread's (a {@code FastThreadLocalThread}, as
 * an event loop is: see {@link FastThreadLocalExecutor}) and nothing else is measured. They are
 * registered on {@code loops} shared embedded event loops, round-robin as the acceptor does, and
 * the relay's {@code HomeLoop} (with its default {@code --home-loop-members}) moves them as it
 * would: with one loop every receiver is written on the publisher's thread; with two, a topic past
 * 16 members spreads the rest over both loops, so at 100 receivers half are reached by a hand-off
 * to the other loop (one queued delivery per message, and a local copy of small frames). An
 * embedded loop runs its queued tasks when asked; each operation runs them where a real loop
 * would, after the read. Both loops run on the one thread, so the hand-off's allocation is the
 * relay's but not its time: no wake-up, and no cache lines moving between cores. The
 * {@code readOutbound} and release of what the receivers' channels wrote stands in for the socket write.
 *
 * <p>Ownership: each operation hands the publisher's pipeline a retained duplicate of one masked
 * frame (the decoder copies the payload out and releases it; the frame is never modified, so the
 * next operation reads the same bytes); every frame a receiver's channel wrote is read back and
 * released. Setup and teardown check one message byte for byte at every receiver; each operation
 * checks that every receiver got exactly one frame; teardown checks the relay holds nothing.
 */
@State(Scope.Thread)
// The worker is a FastThreadLocalThread, as an event loop is (FastThreadLocalExecutor says why). In
// jvmArgsPrepend, so that a -jvmArgsAppend on the command line (e.g. leak detection) keeps it.
@Fork(value = 1, jvmArgsPrepend = {"-Djmh.executor=CUSTOM",
        "-Djmh.executor.class=dev.crossbar.bench.jmh.FastThreadLocalExecutor"},
        jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Xms256m", "-Xmx256m",
                "-XX:MaxDirectMemorySize=256m"})
public class RelaySessionBenchmark extends AbstractBenchmark {

    private static final String TOPIC = "bench";

    @Param({"1", "10", "100"})
    int receivers;

    @Param({"64", "4600"})
    int payloadBytes;

    /** Event loops the connections are served on; the relay runs one per core (2 on the test machine). */
    @Param({"1", "2"})
    int loops;

    /**
     * Topics, each with its publisher and {@code receivers} receivers, published on in turn: with
     * a campus's thousand (-p topics=1000 -p receivers=1), a message's connection objects are seldom
     * in the processor's cache, as on a deployed relay; with one they always are.
     */
    @Param({"1"})
    int topics;

    /** One idle channel per loop: the way to run that loop's queued tasks. */
    private EmbeddedChannel[] loopHandles;
    private EmbeddedChannel[] publishers;
    /** Per topic, its receivers. */
    private EmbeddedChannel[][] receiverChannels;
    /** The topic the next message goes to. */
    private int next;
    private TopicRegistry registry;
    private Router router;
    private byte[] payload;
    /** The client's message as a masked frame; one reference, this class's, held until teardown. */
    private ByteBuf clientFrame;

    @Setup(Level.Trial)
    public void setUp() {
        if (!FastThreadLocalThread.currentThreadWillCleanupFastThreadLocals()) {
            throw new IllegalStateException("not on a FastThreadLocalThread: Netty would recycle nothing here (run with"
                    + " -Djmh.executor=CUSTOM -Djmh.executor.class=" + FastThreadLocalExecutor.class.getName() + ")");
        }
        // The relay's defaults, as CrossbarServer builds its router and pipeline from them.
        ServerConfig config = ServerConfig.builder().build();
        registry = new TopicRegistry(config.maxTopics(), Broker.LOCAL, config.routing(), config.replayLimits());
        router = new Router(registry, config.maxLoopBacklogBytes());
        loopHandles = new EmbeddedChannel[loops];
        List<EventLoop> eventLoops = new ArrayList<>();
        for (int i = 0; i < loops; i++) {
            loopHandles[i] = new EmbeddedChannel();
            // No timer may fire during the run (pings, idle and handshake timeouts): only the relaying is measured.
            loopHandles[i].freezeTime();
            eventLoops.add(loopHandles[i].eventLoop());
        }
        CrossbarInitializer init = new CrossbarInitializer(config, router,
                new DefaultChannelGroup(ImmediateEventExecutor.INSTANCE), Map.of(),
                new ConnectionLimiter(config.maxConnections(), config.maxConnectionsPerAddress()),
                new HandshakeFailures(), null, null, eventLoops, new SessionRegistry(config.sessions()), new Draining(),
                new dev.crossbar.server.session.SendBrakes.Counts());

        publishers = new EmbeddedChannel[topics];
        receiverChannels = new EmbeddedChannel[topics][receivers];
        for (int t = 0; t < topics; t++) {
            // The publisher first, as a camera comes before its viewers: it stays on the topic's home loop.
            publishers[t] = connect(init, eventLoops, t, "/in/" + TOPIC + t);
            for (int i = 0; i < receivers; i++) {
                receiverChannels[t][i] = connect(init, eventLoops, t + i + 1, "/out/" + TOPIC + t);
            }
            Topic topic = registry.get(topicKey(publishers[t]));
            if (topic == null || topic.size() != receivers + 1) {
                throw new IllegalStateException("expected " + (receivers + 1) + " members, found "
                        + (topic == null ? 0 : topic.size()));
            }
        }

        payload = new byte[payloadBytes];
        new Random(payloadBytes).nextBytes(payload);
        clientFrame = maskedFrame(payload, 0x5A3C_96E1);
        checkOneMessageOnEveryTopic();
    }

    /** Registers a connection as the acceptor would (round-robin) and upgrades it to WebSocket on {@code path}. */
    private EmbeddedChannel connect(CrossbarInitializer init, List<EventLoop> eventLoops, int n, String path) {
        EmbeddedChannel ch = EmbeddedChannel.builder().register(false).handlers(init).build();
        eventLoops.get(n % eventLoops.size()).register(ch).syncUninterruptibly();
        ch.writeInbound(Unpooled.copiedBuffer("GET " + path + " HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                + "Sec-WebSocket-Version: 13\r\n\r\n", StandardCharsets.US_ASCII));
        runAllLoops(); // the move to the topic's home loop is queued on the loops
        StringBuilder response = new StringBuilder();
        Object o;
        while ((o = ch.readOutbound()) != null) {
            try {
                response.append(((ByteBuf) o).toString(StandardCharsets.US_ASCII));
            } finally {
                ReferenceCountUtil.release(o);
            }
        }
        if (!response.toString().startsWith("HTTP/1.1 101 ") || !ch.isActive()) {
            throw new IllegalStateException(path + " was not upgraded: " + response);
        }
        return ch;
    }

    private static TopicKey topicKey(EmbeddedChannel publisher) {
        return publisher.attr(ClientInfo.KEY).get().route().topic();
    }

    private void checkOneMessageOnEveryTopic() {
        for (int t = 0; t < topics; t++) {
            checkOneMessage(serverFrame(payload));
        }
    }

    /** The benchmark must not measure nothing: one message reaches every receiver of its topic once, byte for byte. */
    private void checkOneMessage(ByteBuf expected) {
        try {
            int t = next;
            EmbeddedChannel publisher = publishers[t];
            publishOne();
            for (EmbeddedChannel r : receiverChannels[t]) {
                ByteBuf frame = r.readOutbound();
                try {
                    if (frame == null || !ByteBufUtil.equals(frame, expected)) {
                        throw new IllegalStateException("a receiver did not get the message as sent: " + frame);
                    }
                } finally {
                    ReferenceCountUtil.release(frame);
                }
                if (r.readOutbound() != null) {
                    throw new IllegalStateException("a receiver got more than the one message");
                }
            }
            if (publisher.readOutbound() != null) {
                throw new IllegalStateException("the publisher was sent something");
            }
        } finally {
            expected.release();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        // One more message after the run: the client frame must have come through it unchanged.
        checkOneMessageOnEveryTopic();
        for (int t = 0; t < topics; t++) {
            close(publishers[t]);
            for (EmbeddedChannel r : receiverChannels[t]) {
                close(r);
            }
        }
        for (EmbeddedChannel h : loopHandles) {
            h.finishAndReleaseAll();
        }
        int refs = clientFrame.refCnt();
        clientFrame.release();
        if (registry.size() != 0 || router.backlogBytes() != 0 || refs != 1) {
            throw new IllegalStateException("after the run: " + registry.size() + " topics left, " + router.backlogBytes()
                    + " bytes of fan-out backlog, client frame refCnt " + refs + " (expected 1)");
        }
    }

    private void close(EmbeddedChannel ch) {
        ch.close();
        runAllLoops();
        ch.finishAndReleaseAll();
    }

    /** One message from a topic's publisher to every receiver; returns the frames they wrote (always {@code receivers}). */
    @Benchmark
    public int relay() {
        int t = next;
        publishOne();
        int frames = drainReceivers(receiverChannels[t]);
        if (frames != receivers) {
            throw new IllegalStateException(frames + " frames for " + receivers + " receivers");
        }
        return frames;
    }

    /**
     * What a transport does on a read (the frame, then read-complete), then what the loops do after
     * it: the publisher's loop ends its batch (flushes the receivers it wrote, wakes the other loop),
     * the other loop drains its queue. Not {@code writeInbound}: its varargs array would be measured.
     */
    private void publishOne() {
        EmbeddedChannel publisher = publishers[next];
        next = next + 1 == topics ? 0 : next + 1;
        publisher.pipeline().fireChannelRead(clientFrame.retainedDuplicate());
        publisher.pipeline().fireChannelReadComplete();
        publisher.runPendingTasks();
        for (EmbeddedChannel h : loopHandles) {
            h.runPendingTasks();
        }
        publisher.checkException();
    }

    private void runAllLoops() {
        for (int pass = 0; pass < 3; pass++) {
            for (EmbeddedChannel h : loopHandles) {
                h.runPendingTasks();
            }
        }
    }

    /** Reads and releases what the receivers' channels wrote; returns how many frames. */
    private static int drainReceivers(EmbeddedChannel[] receivers) {
        int n = 0;
        for (EmbeddedChannel r : receivers) {
            Object m;
            while ((m = r.readOutbound()) != null) {
                ReferenceCountUtil.release(m);
                n++;
            }
        }
        return n;
    }

    /** A final binary client frame of {@code payload}, masked with {@code key}; the caller owns it. */
    static ByteBuf maskedFrame(byte[] payload, int key) {
        int n = payload.length;
        // Pooled, not the relay's adaptive allocator: a pooled buffer's retainedDuplicate() is recycled,
        // so this stand-in for the socket read allocates nothing, as the relay's (recycled) read buffer does not.
        if (n > 0xFFFF) {
            throw new IllegalArgumentException("payload: " + n + " bytes (expected: <= 65535)");
        }
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(n + 8);
        buf.writeByte(0x82);
        if (n < 126) {
            buf.writeByte(0x80 | n);
        } else {
            buf.writeByte(0x80 | 126).writeShort(n);
        }
        buf.writeInt(key);
        for (int i = 0; i < n; i++) {
            buf.writeByte(payload[i] ^ (key >>> (24 - 8 * (i & 3))));
        }
        return buf;
    }

    /** The frame the relay sends for {@code payload}: final, binary, unmasked; the caller owns it. */
    static ByteBuf serverFrame(byte[] payload) {
        int n = payload.length; // <= 65535, as checked by maskedFrame
        ByteBuf buf = Unpooled.buffer(n + 4).writeByte(0x82);
        if (n < 126) {
            buf.writeByte(n);
        } else {
            buf.writeByte(126).writeShort(n);
        }
        return buf.writeBytes(payload);
    }
}
