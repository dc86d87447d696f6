package dev.crossbar.server.stats;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.websocket.CloseCodes;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The statistics service behind {@code /ws}: takes a snapshot every interval on its own thread and
 * sends it to every stats socket that asked for snapshots; answers on-demand requests there too.
 *
 * <p>Threads: snapshots are built and serialised only on {@code executor} (the relay's admin
 * thread), never on an event loop, so a large relay's snapshot does not delay anyone's messages.
 * Each snapshot is serialised once and its bytes shared by every socket
 * ({@code retainedDuplicate()}).
 *
 * <p>Back-pressure: a socket that is not writable (its outbound buffer is over the relay's client
 * queue bound) skips snapshots until it drains; the next one supersedes what it missed. Requests
 * from one socket are coalesced: at most one is pending at a time.
 */
public final class StatsService implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(StatsService.class);

    private final TopicRegistry topics;
    private final Duration interval;
    private final EventExecutor executor;
    private final SnapshotJson json = new SnapshotJson();
    private final long startedAtMillis = System.currentTimeMillis();
    private final long startedAtNanos = System.nanoTime();
    /** Every open stats socket, for the count and for closing them at shutdown. */
    private final ChannelGroup sockets;
    /** The sockets in {@link StatsFormat#SNAPSHOT} format, which get the periodic push. */
    private final ChannelGroup subscribers;
    /** Created on the executor, so resolving the host name never blocks the caller; used only there. */
    private Snapshotter snapshotter;
    private final String node;
    private ScheduledFuture<?> ticker;

    public StatsService(TopicRegistry topics, Duration interval, EventExecutor executor) {
        this(topics, interval, executor, null);
    }

    /** @param node the name snapshots carry ({@code --node-name}); null: this host's name */
    public StatsService(TopicRegistry topics, Duration interval, EventExecutor executor, String node) {
        this.node = node;
        this.topics = requireNonNull(topics, "topics");
        this.interval = requireNonNull(interval, "interval");
        this.executor = requireNonNull(executor, "executor");
        this.sockets = new DefaultChannelGroup("stats-sockets", executor);
        this.subscribers = new DefaultChannelGroup("stats-subscribers", executor);
    }

    /** Starts the periodic snapshots. */
    public void start() {
        executor.execute(() -> snapshotter = new Snapshotter(topics, node != null ? node : hostName(), startedAtMillis, startedAtNanos,
                interval.toMillis() / 1000.0, sockets::size));
        long ms = interval.toMillis();
        ticker = executor.scheduleAtFixedRate(this::tick, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** Open stats sockets. */
    public int sockets() {
        return sockets.size();
    }

    /** A socket finished its handshake: remember it, and send the first snapshot if it wants them. */
    void attach(StatsSession session) {
        Channel ch = session.channel();
        sockets.add(ch);
        if (session.format() == StatsFormat.SNAPSHOT) {
            executor.execute(() -> {
                try {
                    send(ch, json.write(snapshotter.take(false)));
                } catch (RuntimeException e) {
                    log.warn("{} first snapshot failed", ch, e);
                } finally {
                    // Added after the first send, on this thread, so a tick cannot overtake it.
                    subscribers.add(ch);
                }
            });
        }
    }

    /** The socket sent a message: answer with a snapshot (or the client list) now. */
    void request(StatsSession session) {
        if (!session.requestPending.compareAndSet(false, true)) {
            return;
        }
        executor.execute(() -> {
            try {
                Channel ch = session.channel();
                Snapshot s = snapshotter.take(false);
                if (session.format() == StatsFormat.SNAPSHOT) {
                    send(ch, json.write(s));
                } else {
                    for (Snapshot.ClientView c : s.clients()) {
                        send(ch, json.write(c));
                    }
                }
            } catch (RuntimeException e) {
                log.warn("{} stats request failed", session.channel(), e);
            } finally {
                session.requestPending.set(false);
            }
        });
    }

    private void tick() {
        try {
            Snapshot s = snapshotter.take(true);
            if (subscribers.isEmpty()) {
                return;
            }
            ByteBuf shared = Unpooled.wrappedBuffer(json.write(s));
            try {
                for (Channel ch : subscribers) {
                    if (ch.isWritable()) {
                        ch.writeAndFlush(new TextWebSocketFrame(shared.retainedDuplicate()), ch.voidPromise());
                    }
                }
            } finally {
                shared.release();
            }
        } catch (RuntimeException e) {
            // Never let one bad snapshot cancel the schedule.
            log.warn("statistics snapshot failed", e);
        }
    }

    private static void send(Channel ch, byte[] text) {
        if (ch.isActive() && ch.isWritable()) {
            ch.writeAndFlush(new TextWebSocketFrame(Unpooled.wrappedBuffer(text)), ch.voidPromise());
        }
    }

    /** Stops the snapshots and closes every stats socket with 1001. */
    @Override
    public void close() {
        if (ticker != null) {
            ticker.cancel(false);
        }
        for (Channel ch : sockets) {
            ConnectionLifecycle lifecycle = ch.pipeline().get(ConnectionLifecycle.class);
            if (lifecycle != null) { // null: the channel is closing already
                lifecycle.close(CloseCodes.GOING_AWAY, "relay shutting down");
            }
        }
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException | SecurityException e) {
            return "unknown";
        }
    }
}
