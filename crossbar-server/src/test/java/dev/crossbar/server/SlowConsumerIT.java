package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.relay.Member;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.server.config.SlowConsumerPolicy;
import dev.crossbar.server.session.RelaySession;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.Received;
import dev.crossbar.server.testing.RelayServerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * One of 50 subscribers stops reading with its socket open: the other 49 get every message at the
 * publisher's pace; the stalled one is dropped-counted (or disconnected, per policy), and what
 * the relay holds for it never exceeds its bound.
 */
class SlowConsumerIT {

    /**
     * Per-client queue bound: a healthy client may fall this far behind (about 4.5 s of the stream)
     * and lose nothing, which rides out the scheduling noise of a shared 2-core CI machine; the
     * stalled one (which never reads) still overflows it well before the stream ends (2,400 x 4.6 kB
     * = 11 MB, more than this bound plus what the kernel's socket buffers absorb).
     */
    private static final int QUEUE = 4 * 1024 * 1024;
    /** How long without reading makes the stalled client stalled (shorter than the default). */
    private static final Duration STALL = Duration.ofMillis(300);
    private static final int FRAME = 4_600;
    private static final int MESSAGES = 2_400;
    private static final int HEALTHY = 49;

    private static byte[] frame(int i) {
        byte[] b = new byte[FRAME];
        b[0] = (byte) (i >>> 24);
        b[1] = (byte) (i >>> 16);
        b[2] = (byte) (i >>> 8);
        b[3] = (byte) i;
        return b;
    }

    private static int seq(byte[] b) {
        return ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    }

    /** Runs the scenario; returns the stalled member's session (or null once it is gone). */
    private void run(RelayServerExtension relay, boolean expectDisconnect) throws Exception {
        List<JdkClient> healthy = new ArrayList<>();
        NettyClient stalled = null;
        try (NettyClient pub = NettyClient.connect(relay.ws("/in/video"))) {
            for (int i = 0; i < HEALTHY; i++) {
                healthy.add(JdkClient.connect(relay.ws("/out/video")));
            }
            stalled = NettyClient.connectStalled(relay.ws("/out/video"));
            await("all joined", Duration.ofSeconds(10), () -> relay.server().connections() == HEALTHY + 2);
            Topic topic = relay.server().topics().topics().iterator().next();
            RelaySession stalledSession = null;
            for (Member m : topic.members()) {
                RelaySession s = (RelaySession) m;
                if (s.channel().remoteAddress().toString().endsWith(":" + localPort(stalled))) {
                    stalledSession = s;
                }
            }
            assertTrue(stalledSession != null, "found the stalled session");
            RelaySession watched = stalledSession;

            AtomicLong peakQueued = new AtomicLong();
            AtomicLong peakDirect = new AtomicLong();
            Thread sampler = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    var out = watched.channel().unsafe().outboundBuffer();
                    if (out != null) {
                        peakQueued.accumulateAndGet(out.totalPendingWriteBytes(), Math::max);
                    }
                    peakDirect.accumulateAndGet(ChurnIT.usedDirectMemory(), Math::max);
                    try {
                        Thread.sleep(2);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            sampler.setDaemon(true);
            sampler.start();

            // Each healthy subscriber checks and discards as it receives, so the test holds no backlog.
            List<Thread> checkers = new ArrayList<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (JdkClient h : healthy) {
                Thread t = new Thread(() -> {
                    try {
                        for (int i = 0; i < MESSAGES; i++) {
                            Received r = h.take(Duration.ofSeconds(30));
                            assertEquals(FRAME, r.data().length);
                            assertEquals(i, seq(r.data()), "healthy subscriber lost or reordered a message");
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
                t.setDaemon(true);
                t.start();
                checkers.add(t);
            }

            long start = System.nanoTime();
            for (int i = 0; i < MESSAGES; i++) {
                pub.write(new io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame(
                        io.netty.buffer.Unpooled.wrappedBuffer(frame(i))));
                pub.flush();
                // ~200 frames/s, seven times a 30 fps camera: 50 x 0.9 MB/s of egress, which this
                // small machine sustains with paranoid leak detection on in relay and clients alike.
                Thread.sleep(5);
            }
            pub.flush();
            long publishMillis = (System.nanoTime() - start) / 1_000_000;

            for (Thread t : checkers) {
                t.join(30_000);
                if (t.isAlive()) {
                    failures.add(new AssertionError("a healthy subscriber's checker still waiting after 30 s"));
                }
            }
            if (!failures.isEmpty()) {
                StringBuilder drops = new StringBuilder();
                for (Member m : topic.members()) {
                    drops.append(m.stats().dropped()).append(' ');
                }
                throw new AssertionError(failures.size() + " healthy subscribers failed; drops per member: " + drops,
                        failures.get(0));
            }
            long deliveredMillis = (System.nanoTime() - start) / 1_000_000;
            sampler.interrupt();
            sampler.join(5_000);

            long dropped = watched.stats().dropped();
            System.out.printf("slow-consumer %s: published %d msgs in %d ms, %d healthy got all in %d ms; "
                    + "stalled dropped %d, its queue peaked at %d B (bound %d), direct memory peaked at %d B%n",
                    expectDisconnect ? "disconnect" : "drop", MESSAGES, publishMillis, HEALTHY, deliveredMillis,
                    dropped, peakQueued.get(), QUEUE, peakDirect.get());
            assertTrue(dropped > 0, "the stalled subscriber had nothing dropped");
            // Bound: the queue bound, plus what the stream brings while the relay still sees the
            // socket taking bytes (its buffers filling) and then for one stall timeout (STALL):
            // the publisher sends at most 200 x 4.6 kB a second, under 0.5 MB in that time.
            long bound = QUEUE + 1024 * 1024;
            assertTrue(peakQueued.get() <= bound,
                    "stalled client's queue reached " + peakQueued.get() + " bytes (bound " + bound + ")");
            assertTrue(peakDirect.get() < 64L * 1024 * 1024, "direct memory peaked at " + peakDirect.get());
            for (Member m : topic.members()) {
                if (m != watched) {
                    assertEquals(0, m.stats().dropped(), "a healthy member had drops");
                }
            }
            if (expectDisconnect) {
                await("stalled subscriber disconnected", Duration.ofSeconds(30), () -> !watched.channel().isActive());
                // The session group forgets a channel in its close listener, just after it stops being active.
                await("only the stalled subscriber gone", Duration.ofSeconds(30),
                        () -> relay.server().connections() == HEALTHY + 1);
            } else {
                assertTrue(watched.channel().isActive(), "drop policy keeps the stalled client connected");
            }
        } finally {
            for (JdkClient h : healthy) {
                h.close();
            }
            if (stalled != null) {
                stalled.channel.close();
            }
        }
    }

    private static int localPort(NettyClient c) {
        return ((java.net.InetSocketAddress) c.channel.localAddress()).getPort();
    }

    @org.junit.jupiter.api.Nested
    class DropPolicy {
        @org.junit.jupiter.api.extension.RegisterExtension
        final RelayServerExtension relay = new RelayServerExtension(b -> b.maxClientQueueBytes(QUEUE)
                .clientStallTimeout(STALL));

        @Test
        void stalledSubscriberIsDroppedWholeAndOthersKeepPace() throws Exception {
            run(relay, false);
        }
    }

    @org.junit.jupiter.api.Nested
    class DisconnectPolicy {
        @org.junit.jupiter.api.extension.RegisterExtension
        final RelayServerExtension relay = new RelayServerExtension(b -> b.maxClientQueueBytes(QUEUE)
                .clientStallTimeout(STALL).slowConsumerPolicy(SlowConsumerPolicy.DISCONNECT).slowConsumerGrace(Duration.ofMillis(300)));

        @Test
        void stalledSubscriberIsDisconnectedAfterTheGrace() throws Exception {
            run(relay, true);
        }
    }
}
