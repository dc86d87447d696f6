package dev.crossbar.server.warmup;

import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Connections coming and going while the warm-up's traffic runs: one at a time, each upgraded on
 * the next of {@link #PATHS}, sending one small message, then closed (with a close frame every
 * other time, as browsers do; else by dropping the TCP connection, as a lost client does). Once per
 * round of the paths, before the next upgrade, a {@linkplain WarmupClient#probe probe} connects,
 * writes a line break or nothing, and hangs up, as health checks do.
 *
 * <p>Why: the JIT compiles the pipeline's shared methods ({@code ByteToMessageDecoder}, the handler
 * contexts, the epoll channel's read loop) for the types and branches it has profiled. With steady
 * traffic alone, those profiles hold the frame path only, and the first real client's upgrade (the
 * accept, the HTTP codec, a move to the topic's loop, a topic created) runs into compiled code that
 * never saw it: measured, 34 uncommon traps within 0.7 s of the first real connections, after which
 * those methods ran profiled for 5 s until C2 compiled them again, inside a benchmark's measured
 * window. Connections interleaved with the traffic put those paths into the profiles first. The
 * probes add a read that returns only the end of the stream, which no client's read here did:
 * the first probe at the deployed relay (the benchmark's readiness check) threw the read path's
 * compiled code away, and C2 compiled it again 7 s later.
 *
 * <p>Ownership: the message sent is a wrapped array, released by the channel once written; what the
 * churned connections receive is counted into their own counter and released by {@link WarmupClient}.
 */
final class ConnectionChurn {

    /** The mesh (a member joins and leaves, moved to its loop), a subscriber that sends (dropped), a topic of its own. */
    static final List<String> PATHS = List.of(JitWarmup.MESH_PATH, JitWarmup.FANOUT_OUT, "/warm-up/churn");
    /** Receivers of the message each path's connection sends: the mesh's members; none on /out/ or alone. */
    private static final int[] RECEIVERS = {JitWarmup.MESH_MEMBERS, 0, 0};
    private static final int CLOSE_WAIT_MILLIS = 1_000;
    /** What the probes write before hanging up, in turn: a line break (as {@code echo > /dev/tcp/...}), nothing. */
    private static final List<String> PROBE_LINES = List.of("\n", "");

    private final EventLoopGroup group;
    private final Class<? extends SocketChannel> socket;
    private final InetSocketAddress relay;
    private final int maxFrame;
    private final byte[] message;
    /** What the churned connections receive: not owed to anyone, so not checked. */
    private final AtomicLong ownReceived = new AtomicLong();
    private WarmupClient current;
    private long opened;
    private long probes;

    ConnectionChurn(EventLoopGroup group, Class<? extends SocketChannel> socket, InetSocketAddress relay,
                    int maxFrame, byte[] message) {
        this.group = group;
        this.socket = socket;
        this.relay = relay;
        this.maxFrame = maxFrame;
        this.message = message;
    }

    /**
     * Closes the previous connection and opens the next, which sends one message.
     *
     * @return the deliveries that message owes to the traffic's own receivers
     */
    int step() throws Exception {
        close();
        int path = (int) (opened % PATHS.size());
        if (path == 0) {
            WarmupClient.probe(group, socket, relay, PROBE_LINES.get((int) (probes++ % PROBE_LINES.size())));
        }
        current = WarmupClient.connect(group, socket, relay, PATHS.get(path), maxFrame, ownReceived);
        opened++;
        current.send(Unpooled.wrappedBuffer(message), false);
        return RECEIVERS[path];
    }

    /** Connections opened so far. */
    long opened() {
        return opened;
    }

    /** Probes made so far: connections that were no client. */
    long probes() {
        return probes;
    }

    /** Closes the open connection, if any; waits a bounded time for the close to complete. */
    void close() {
        if (current == null) {
            return;
        }
        WarmupClient closing = current;
        current = null;
        if (opened % 2 == 0) {
            closing.closeWithFrame().awaitUninterruptibly(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        }
        // Without a close frame, or if the relay did not answer one in time: drop the connection.
        closing.close().awaitUninterruptibly(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
    }
}
