package dev.crossbar.server.warmup;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.transport.RelayLoops;
import dev.crossbar.server.transport.Transport;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs the relay's hot path for a while before the relay opens its port: a relay of its own with
 * the deployed one's event loops, transport and message limit, on an ephemeral loopback port,
 * carries a mesh of small binary and text messages, a fan-out of 4,600-byte ones to more members
 * than one loop takes (so the hand-off between loops runs too), and now and then a 64 KiB message,
 * one frame per write, while connections come and go ({@link ConnectionChurn}); then it is closed,
 * and the deployed relay serves on its loops.
 *
 * <p>Why: the JIT compiles a method after thousands of calls. At the rates a lab relay often sees
 * (a camera at 30 frames a second to ten viewers, say), that takes minutes, and until then the
 * relay runs interpreted or lightly compiled code and its compiler threads compete with the event
 * loops: measured, a relay 5 s after start spent 6x the CPU per delivery of a Rust peer, and one
 * 120 s after start 1.5x. Compiled code is shared by every instance of a class, so what this relay
 * compiles serves the real one. The cost is paid once, at start ({@code --warm-up}, 0 skips it).
 *
 * <p>It never stops the relay from starting: whatever goes wrong ends the warm-up early and is
 * reported in the {@link Report}. Nothing of it but the loops it ran on outlives {@link #run}: its
 * relay and clients are closed, and every buffer it sent or received is released.
 */
public final class JitWarmup {

    static final String MESH_PATH = "/warm-up/mesh";
    static final String FANOUT_IN = "/in/warm-up/fan-out";
    static final String FANOUT_OUT = "/out/warm-up/fan-out";
    static final int MESH_MEMBERS = 4;
    /** More than the default home-loop share (16), so that members land on every loop. */
    static final int FANOUT_SUBSCRIBERS = 20;
    static final int SMALL_BYTES = 64;
    static final int VIDEO_BYTES = 4_600;
    static final int LARGE_BYTES = 64 * 1024;
    /** A round is one message from each mesh member in each type, and one to the fan-out. */
    private static final int ROUNDS_IN_FLIGHT = 8;
    private static final int LARGE_EVERY_ROUNDS = 16;
    /** One connection opened and one closed per this many batches of rounds: 150-180 in 2 s. */
    private static final int CHURN_EVERY_BATCHES = 2;
    /** How long a round may wait for its deliveries before the warm-up gives up. */
    private static final Duration STALL = Duration.ofSeconds(5);
    /**
     * The second pass, after the compiler has caught up with the first (see {@link #run}): one
     * message at a time, so that each is a wake-up of the relay's loops, until a method called once
     * per wake-up has been called the 5,000 times C2 asks of it (a few hundred microseconds each).
     */
    static final Duration SECOND_PASS = Duration.ofSeconds(1);
    /** In the second pass, one message in this many goes to the fan-out (to both loops), the rest to the mesh. */
    private static final int PACED_FANOUT_EVERY = 4;
    /**
     * In the second pass, once per this many steps, a burst of {@link #PACED_BURST} messages from
     * one sender instead of one message, in turn to the fan-out and to the mesh. Why: a loop writes
     * messages queued back to back for the same receivers as one run ({@code LoopQueue.drainRun}),
     * which single messages never make; left at the first pass's profile, the run path reached C2
     * only 3-13 s into a mesh's traffic, one compilation of 0.17-0.24 s of CPU (as much as the relay
     * spent relaying in 5-8 s of it).
     */
    private static final int PACED_BURST_EVERY = 8;
    private static final int PACED_BURST = 4;
    /**
     * In the second pass, one connection opened and one closed per this many messages. Why: C2
     * compiles the read path again during the second pass, from that pass's profile; without
     * connections ending in it, the recompiled read never saw a read return nothing or end of
     * stream, and a deployed relay's first client to hang up threw it away again (measured: an
     * uncommon trap in {@code epollInReady}, recompiled 6.5 s later).
     */
    private static final int PACED_CHURN_EVERY = 64;

    private JitWarmup() {
    }

    /**
     * What the warm-up did.
     *
     * @param messages    messages sent to its relay
     * @param expected    deliveries those messages owed
     * @param delivered   deliveries its clients received
     * @param connections connections opened and closed while the traffic ran
     * @param elapsed     from start to everything closed
     * @param stoppedBy   null if it ran its course; else why it ended early
     */
    public record Report(long messages, long expected, long delivered, long connections, Duration elapsed,
                         String stoppedBy) {

        /** One line for the log. */
        public String describe() {
            String line = String.format("JIT warm-up: %,d messages relayed to %,d receivers, %,d connections opened"
                    + " and closed, over loopback in %.1f s", messages, delivered, connections,
                    elapsed.toMillis() / 1000.0);
            return stoppedBy == null ? line : line + " (ended early: " + stoppedBy + ")";
        }
    }

    /**
     * Carries traffic through a relay like {@code deployed}, on {@code loops}, for about {@code
     * duration} (after its clients have connected), then closes it; the loops go on, for the
     * deployed relay (see {@link RelayLoops} for why). Its clients run on the accepting loop.
     * Blocks; call before the deployed relay starts.
     */
    public static Report run(ServerConfig deployed, Duration duration, RelayLoops loops) {
        requireNonNull(deployed, "deployed");
        requireNonNull(duration, "duration");
        requireNonNull(loops, "loops");
        long start = System.nanoTime();
        Transport transport = loops.transport();
        EventLoopGroup clients = loops.accept();
        AtomicLong received = new AtomicLong();
        Traffic traffic = new Traffic(received, deployed.maxMessageBytes());
        String stoppedBy = null;
        CrossbarServer relay = null;
        List<WarmupClient> connected = new ArrayList<>();
        ConnectionChurn churn = null;
        try {
            relay = CrossbarServer.startQuietly(relayLike(deployed), loops);
            InetSocketAddress address = relay.localAddress();
            int maxFrame = Math.max(LARGE_BYTES, deployed.maxMessageBytes());
            List<WarmupClient> mesh = new ArrayList<>();
            for (int i = 0; i < MESH_MEMBERS; i++) {
                mesh.add(track(connected, WarmupClient.connect(clients, transport.socketChannel(), address,
                        MESH_PATH, maxFrame, received)));
            }
            for (int i = 0; i < FANOUT_SUBSCRIBERS; i++) {
                track(connected, WarmupClient.connect(clients, transport.socketChannel(), address, FANOUT_OUT,
                        maxFrame, received));
            }
            WarmupClient publisher = track(connected, WarmupClient.connect(clients, transport.socketChannel(), address,
                    FANOUT_IN, maxFrame, received));
            awaitJoined(relay, connected.size());
            churn = new ConnectionChurn(clients, transport.socketChannel(), address, maxFrame, traffic.small);
            // The traffic gets all of duration: setting up takes a cold JVM most of a second.
            stoppedBy = traffic.run(mesh, publisher, churn, System.nanoTime() + duration.toNanos());
            // The first pass keeps the loops busy, so they wake up seldom: the methods called once
            // per wake-up (the event loop's own) come out of it half compiled, and reached C2 10-17 s
            // into a 10-client mesh's traffic, on its clients' time (-XX:+PrintCompilation). Once the
            // compiler has caught up, a second pass sends one message at a time, each a wake-up.
            if (stoppedBy == null && !duration.isZero() && !duration.isNegative()) {
                CompilerQuiet.await();
                stoppedBy = traffic.paced(mesh, publisher, churn, System.nanoTime() + SECOND_PASS.toNanos());
                CompilerQuiet.await();
            }
        } catch (Exception e) {
            stoppedBy = e.toString();
        } catch (OutOfMemoryError e) {
            stoppedBy = "out of memory";
        } finally {
            if (churn != null) {
                churn.close();
            }
            for (WarmupClient c : connected) {
                c.close().awaitUninterruptibly(1, TimeUnit.SECONDS);
            }
            if (relay != null) {
                relay.close();
            }
        }
        return new Report(traffic.messages, traffic.expected, received.get(), churn == null ? 0 : churn.opened(),
                Duration.ofNanos(System.nanoTime() - start), stoppedBy);
    }

    /**
     * The deployed relay's code paths and shape (loops, transport, home-loop share, message limit),
     * with nothing that reaches beyond this process: loopback, no cluster, no TLS, no access control.
     */
    static ServerConfig relayLike(ServerConfig deployed) {
        return ServerConfig.builder()
                .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .eventLoops(deployed.eventLoops())
                .homeLoopMembers(deployed.homeLoopMembers())
                .preferNativeTransport(deployed.preferNativeTransport())
                .maxMessageBytes(deployed.maxMessageBytes())
                .maxLoopBacklogBytes(deployed.maxLoopBacklogBytes())
                .maxClientQueueBytes(deployed.maxClientQueueBytes())
                .shutdownGrace(Duration.ofSeconds(1))
                .build();
    }

    private static WarmupClient track(List<WarmupClient> connected, WarmupClient c) {
        connected.add(c);
        return c;
    }

    /** Until every client is a member of its topic: a message sent before would miss it. */
    private static void awaitJoined(CrossbarServer relay, int clients) throws InterruptedException {
        long deadline = System.nanoTime() + STALL.toNanos();
        while (relay.connections() < clients) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(relay.connections() + " of " + clients + " clients joined");
            }
            Thread.sleep(1);
        }
    }

    /**
     * The rounds of messages, a few in flight at a time; counts what was sent and what is owed.
     * Payloads are cut to the deployed message limit, so that no warm-up message is refused.
     */
    private static final class Traffic {
        private final AtomicLong received;
        private final byte[] small;
        private final byte[] video;
        private final byte[] large;
        long messages;
        long expected;

        Traffic(AtomicLong received, int maxMessageBytes) {
            this.received = received;
            this.small = filled(Math.min(SMALL_BYTES, maxMessageBytes));
            this.video = filled(Math.min(VIDEO_BYTES, maxMessageBytes));
            this.large = filled(Math.min(LARGE_BYTES, maxMessageBytes));
        }

        private static byte[] filled(int n) {
            byte[] b = new byte[n];
            Arrays.fill(b, (byte) 'x'); // valid UTF-8, for the text messages
            return b;
        }

        /** @return null when {@code deadline} came; else why it stopped */
        String run(List<WarmupClient> mesh, WarmupClient publisher, ConnectionChurn churn, long deadline)
                throws Exception {
            long round = 0;
            for (long batch = 0; System.nanoTime() < deadline; batch++) {
                if (batch % CHURN_EVERY_BATCHES == 0) {
                    expected += churn.step();
                    messages++;
                }
                for (int i = 0; i < ROUNDS_IN_FLIGHT; i++, round++) {
                    for (WarmupClient member : mesh) {
                        send(member, small, false, MESH_MEMBERS - 1);
                        send(member, small, true, MESH_MEMBERS - 1);
                    }
                    send(publisher, video, false, FANOUT_SUBSCRIBERS);
                    if (round % LARGE_EVERY_ROUNDS == 0) {
                        send(mesh.get(0), large, false, MESH_MEMBERS - 1);
                    }
                }
                if (!awaitDeliveries()) {
                    return "deliveries stopped at " + received.get() + " of " + expected;
                }
            }
            return null;
        }

        /**
         * One message at a time until {@code deadline}, with now and then a burst from one sender
         * and a connection opened and closed: null when it came; else why it stopped.
         */
        String paced(List<WarmupClient> mesh, WarmupClient publisher, ConnectionChurn churn, long deadline)
                throws Exception {
            for (int i = 0; System.nanoTime() < deadline; i++) {
                if (i % PACED_CHURN_EVERY == 0) {
                    expected += churn.step();
                    messages++;
                } else if (i % PACED_BURST_EVERY == 0) {
                    boolean fanOut = i / PACED_BURST_EVERY % 2 == 0;
                    for (int k = 0; k < PACED_BURST; k++) {
                        if (fanOut) {
                            send(publisher, video, false, FANOUT_SUBSCRIBERS);
                        } else {
                            send(mesh.get(0), small, false, MESH_MEMBERS - 1);
                        }
                    }
                } else if (i % PACED_FANOUT_EVERY == 0) {
                    send(publisher, video, false, FANOUT_SUBSCRIBERS);
                } else {
                    send(mesh.get(i % MESH_MEMBERS), small, i % 2 == 0, MESH_MEMBERS - 1);
                }
                if (!awaitDeliveries()) {
                    return "deliveries stopped at " + received.get() + " of " + expected;
                }
            }
            return null;
        }

        private void send(WarmupClient from, byte[] payload, boolean text, int receivers) {
            from.send(Unpooled.wrappedBuffer(payload), text);
            messages++;
            expected += receivers;
        }

        private boolean awaitDeliveries() {
            long deadline = System.nanoTime() + STALL.toNanos();
            while (received.get() < expected) {
                if (System.nanoTime() > deadline) {
                    return false;
                }
                LockSupport.parkNanos(100_000);
            }
            return true;
        }
    }
}
