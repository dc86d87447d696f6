package dev.crossbar.server.stats;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.config.Json;
import dev.crossbar.server.stats.Snapshot.ClientView;
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
import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Predicate;
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
 * <p>Cluster: with a {@link PeerLink}, this node answers the others' statistics requests (on the
 * same thread) and, for sockets of scope {@code cluster}, gathers every node's topic summary each
 * interval and merges them ({@link ClusterView}); a node silent past the cluster timeout is shown
 * missing. Waiting for replies never holds the thread: the merge runs when they are in.
 *
 * <p>Privacy: each socket reads at a {@link ClientDetails} level fixed at its upgrade; a snapshot is
 * serialised at most once per level in use.
 *
 * <p>Back-pressure: a socket that is not writable (its outbound buffer is over the relay's client
 * queue bound) skips snapshots until it drains; the next one supersedes what it missed. Requests
 * from one socket are bounded: at most one pending at a time on a node's own view, a few on a cluster
 * socket (one per topic whose rows the reader has open); more are dropped.
 */
public final class StatsService implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(StatsService.class);
    /** A summary carries topics only: client rows are what would make it large. */
    private static final Predicate<TopicKey> NO_ROWS = k -> false;

    private final TopicRegistry topics;
    private final Duration interval;
    private final EventExecutor executor;
    private final SnapshotJson json = new SnapshotJson();
    private final long startedAtMillis = System.currentTimeMillis();
    private final long startedAtNanos = System.nanoTime();
    /** Every open stats socket, for the count and for closing them at shutdown. */
    private final ChannelGroup sockets;
    /** Local-scope sockets in {@link StatsFormat#SNAPSHOT} format, which get the periodic push, by what they may see. */
    private final Map<ClientDetails, ChannelGroup> subscribers = new EnumMap<>(ClientDetails.class);
    /** Cluster-scope sockets, which get the merged view each interval, by what they may see. */
    private final Map<ClientDetails, ChannelGroup> clusterSubscribers = new EnumMap<>(ClientDetails.class);
    /** The other nodes, or null for a node on its own. */
    private final PeerLink peers;
    private final Duration clusterTimeout;
    /** Created on the executor, so resolving the host name never blocks the caller; used only there. */
    private Snapshotter snapshotter;
    private ClusterView cluster;
    /** Chart history of this node's topics, and of the cluster's (kept while cluster readers are open). */
    private final TopicTrends localTrends = new TopicTrends();
    private final TopicTrends clusterTrends = new TopicTrends();
    private String nodeName;
    private final String node;
    private final SessionSource sessions;
    private ScheduledFuture<?> ticker;

    public StatsService(TopicRegistry topics, Duration interval, EventExecutor executor) {
        this(topics, interval, executor, null);
    }

    /** @param node the name snapshots carry ({@code --node-name}); null: this host's name */
    public StatsService(TopicRegistry topics, Duration interval, EventExecutor executor, String node) {
        this(topics, interval, executor, node, null, interval);
    }

    /**
     * @param peers the other nodes of the cluster, or null for a node on its own
     * @param clusterTimeout how long a cluster round waits for the other nodes
     */
    public StatsService(TopicRegistry topics, Duration interval, EventExecutor executor, String node, PeerLink peers,
                        Duration clusterTimeout) {
        this(topics, interval, executor, node, peers, clusterTimeout, SessionSource.NONE);
    }

    /** @param sessions the 1:1 sessions snapshots show */
    public StatsService(TopicRegistry topics, Duration interval, EventExecutor executor, String node, PeerLink peers,
                        Duration clusterTimeout, SessionSource sessions) {
        this.node = node;
        this.sessions = requireNonNull(sessions, "sessions");
        this.topics = requireNonNull(topics, "topics");
        this.interval = requireNonNull(interval, "interval");
        this.executor = requireNonNull(executor, "executor");
        this.peers = peers;
        // A round longer than the interval would overlap the next one.
        this.clusterTimeout = requireNonNull(clusterTimeout, "clusterTimeout").compareTo(interval) > 0 ? interval : clusterTimeout;
        this.sockets = new DefaultChannelGroup("stats-sockets", executor);
        for (ClientDetails d : ClientDetails.values()) {
            subscribers.put(d, new DefaultChannelGroup("stats-subscribers-" + d.label(), executor));
            clusterSubscribers.put(d, new DefaultChannelGroup("stats-cluster-" + d.label(), executor));
        }
    }

    /** Starts the periodic snapshots, and answering the other nodes. */
    public void start() {
        executor.execute(() -> {
            nodeName = node != null ? node : hostName();
            snapshotter = new Snapshotter(topics, nodeName, startedAtMillis, startedAtNanos,
                    interval.toMillis() / 1000.0, sockets::size, peers != null, sessions);
            cluster = new ClusterView(nodeName);
            if (peers != null) {
                peers.serve(this::answer);
            }
        });
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
        if (session.scope() == StatsScope.CLUSTER) {
            executor.execute(() -> {
                clusterRound(snapshotter.take(NO_ROWS), view -> {
                    if (view != null) {
                        send(ch, json.write(view.forReader(session.details().label(), clusterTrends.trends())));
                    }
                });
                // Added now: a tick's round may finish before this one; the reader then sees the later view first.
                clusterSubscribers.get(session.details()).add(ch);
            });
        } else if (session.format() == StatsFormat.SNAPSHOT) {
            executor.execute(() -> {
                try {
                    send(ch, json.write(session.details().apply(snapshotter.take()).withTrends(localTrends.trends())));
                } catch (RuntimeException e) {
                    log.warn("{} first snapshot failed", ch, e);
                } finally {
                    // Added after the first send, on this thread, so a tick cannot overtake it.
                    subscribers.get(session.details()).add(ch);
                }
            });
        }
    }

    /**
     * The socket sent a message: answer with a snapshot (or the client list) now; on a cluster socket,
     * {@code {"topic":...,"schema":...}} asks for that topic's client rows from every node.
     */
    void request(StatsSession session, String text) {
        if (session.pendingRequests.incrementAndGet() > session.maxPendingRequests()) {
            session.pendingRequests.decrementAndGet();
            return;
        }
        // Released exactly once, whichever way the request ends (a cluster round ends later, on a reply).
        AtomicBoolean released = new AtomicBoolean();
        Runnable release = () -> {
            if (released.compareAndSet(false, true)) {
                session.pendingRequests.decrementAndGet();
            }
        };
        executor.execute(() -> {
            try {
                Channel ch = session.channel();
                if (session.scope() == StatsScope.CLUSTER) {
                    JsonNode topic = topicRequest(text);
                    Consumer<Object> reply = m -> {
                        try {
                            if (m != null) {
                                send(ch, json.write(m));
                            }
                        } finally {
                            release.run();
                        }
                    };
                    if (topic != null) {
                        clients(topic.path("topic").asText(), topic.path("schema").asText(), session.details(), reply::accept);
                    } else {
                        clusterRound(snapshotter.take(NO_ROWS),
                                v -> reply.accept(v == null ? null : v.forReader(session.details().label(), null)));
                    }
                    return;
                }
                try {
                    Snapshot s = session.details().apply(snapshotter.take());
                    if (session.format() == StatsFormat.SNAPSHOT) {
                        send(ch, json.write(s));
                    } else {
                        for (ClientView c : s.clients()) {
                            send(ch, json.write(c));
                        }
                    }
                } finally {
                    release.run();
                }
            } catch (RuntimeException e) {
                log.warn("{} stats request failed", session.channel(), e);
                release.run();
            }
        });
    }

    /** The {@code topic} and {@code schema} of a client-rows request, or null for any other message. */
    private static JsonNode topicRequest(String text) {
        try {
            JsonNode n = Json.MAPPER.readTree(text);
            return n != null && n.path("topic").isTextual() && n.path("schema").isTextual() ? n : null;
        } catch (IOException e) {
            return null;
        }
    }

    private void tick() {
        try {
            localTrends.record(snapshotter.tick());
            boolean readers = subscribers.values().stream().anyMatch(g -> !g.isEmpty());
            boolean clusterReaders = clusterSubscribers.values().stream().anyMatch(g -> !g.isEmpty());
            if (!readers && !clusterReaders) {
                return;
            }
            // Taken just after the tick, so it reports the rates the tick measured.
            Snapshot s = snapshotter.take(readers ? null : NO_ROWS);
            for (Map.Entry<ClientDetails, ChannelGroup> e : subscribers.entrySet()) {
                if (!e.getValue().isEmpty()) {
                    push(e.getValue(), json.write(e.getKey().apply(s)));
                }
            }
            if (clusterReaders) {
                clusterRound(s, view -> {
                    if (view == null) {
                        return;
                    }
                    clusterTrends.record(view.topics().stream().map(TopicTrends.Point::of).toList());
                    for (Map.Entry<ClientDetails, ChannelGroup> e : clusterSubscribers.entrySet()) {
                        if (!e.getValue().isEmpty()) {
                            push(e.getValue(), json.write(view.forReader(e.getKey().label(), null)));
                        }
                    }
                });
            }
        } catch (RuntimeException e) {
            // Never let one bad snapshot cancel the schedule.
            log.warn("statistics snapshot failed", e);
        }
    }

    /** Serialised once, shared by every writable socket of the group. */
    private static void push(ChannelGroup group, byte[] text) {
        ByteBuf shared = Unpooled.wrappedBuffer(text);
        try {
            for (Channel ch : group) {
                if (ch.isWritable()) {
                    ch.writeAndFlush(new TextWebSocketFrame(shared.retainedDuplicate()), ch.voidPromise());
                }
            }
        } finally {
            shared.release();
        }
    }

    /**
     * Asks every other node for its topic summary and hands {@code then} the merge with {@code local}
     * once the replies are in or the cluster timeout has passed (at once without peers); null if the
     * merge failed.
     */
    private void clusterRound(Snapshot local, Consumer<ClusterSnapshot> then) {
        if (peers == null) {
            then.accept(cluster.merge(local, ClientDetails.TRUNCATED.label()));
            return;
        }
        byte[] request = PeerMessages.write(new PeerMessages.Request(PeerMessages.SUMMARY, nodeName, null, null, null));
        // A reply proves its node was up when the request left: that is when it was last seen.
        Instant asked = Instant.now();
        peers.gather(request, cluster.knownPeers(), clusterTimeout, replies -> {
            try {
                int ignored = cluster.update(replies, asked);
                if (ignored > 0 && log.isDebugEnabled()) {
                    log.debug("ignored {} statistics replies (unreadable, or past {} nodes)", ignored, ClusterView.MAX_NODES);
                }
                then.accept(cluster.merge(local, ClientDetails.TRUNCATED.label()));
            } catch (RuntimeException e) {
                log.warn("cluster statistics merge failed", e);
                then.accept(null);
            }
        });
    }

    /** One topic's client rows, this node's and those of every node whose last summary lists the topic. */
    private void clients(String topic, String schema, ClientDetails details, Consumer<ClusterSnapshot.Clients> then) {
        Snapshot local = details.apply(snapshotter.take(k -> matches(k, topic, schema)));
        List<ClientView> rows = new ArrayList<>(local.clients());
        List<String> ask = peers == null ? List.of() : cluster.nodesWith(topic, schema);
        if (ask.isEmpty()) {
            then.accept(new ClusterSnapshot.Clients(ClusterSnapshot.SCOPE, "clients", topic, schema, details.label(), rows,
                    List.of(), 0));
            return;
        }
        byte[] request = PeerMessages.write(new PeerMessages.Request(PeerMessages.CLIENTS, nodeName, topic, schema,
                details.label()));
        peers.ask(ask, request, clusterTimeout, replies -> {
            try {
                then.accept(merged(rows, ask, replies, topic, schema, details));
            } catch (RuntimeException e) {
                log.warn("cluster client rows merge failed", e);
                then.accept(null);
            }
        });
    }

    private static ClusterSnapshot.Clients merged(List<ClientView> rows, List<String> ask, List<byte[]> replies,
                                                  String topic, String schema, ClientDetails details) {
        {
            Set<String> answered = new HashSet<>();
            int omitted = 0;
            for (byte[] data : replies) {
                PeerMessages.Reply r = PeerMessages.reply(data);
                if (r != null && ask.contains(r.node()) && answered.add(r.node())) {
                    // Truncated again here: what a reader sees never depends on another node's settings.
                    rows.addAll(details == ClientDetails.FULL ? r.snapshot().clients()
                            : ClientDetails.truncate(r.snapshot().clients()));
                    omitted += r.omittedClients();
                }
            }
            List<String> missing = new ArrayList<>(ask);
            missing.removeAll(answered);
            return new ClusterSnapshot.Clients(ClusterSnapshot.SCOPE, "clients", topic, schema, details.label(), rows,
                    missing, omitted);
        }
    }

    private static boolean matches(TopicKey key, String topic, String schema) {
        return key.schema().name().equals(schema) && Snapshotter.displayName(key).equals(topic);
    }

    /** Another node's request, on this thread: its reply, within the link's bound, or null. */
    private byte[] answer(byte[] data) {
        PeerMessages.Request r = PeerMessages.request(data);
        if (r == null) {
            return null;
        }
        int max = peers.maxReplyBytes();
        if (PeerMessages.SUMMARY.equals(r.kind())) {
            return PeerMessages.bounded(new PeerMessages.Reply(nodeName, snapshotter.take(NO_ROWS), 0, 0), max);
        }
        if (PeerMessages.CLIENTS.equals(r.kind()) && r.topic() != null && r.schema() != null) {
            ClientDetails d = ClientDetails.FULL.label().equals(r.clientDetails()) ? ClientDetails.FULL : ClientDetails.TRUNCATED;
            Snapshot s = d.apply(snapshotter.take(k -> matches(k, r.topic(), r.schema())));
            return PeerMessages.bounded(new PeerMessages.Reply(nodeName, s, 0, 0), max);
        }
        return null;
    }

    private static void send(Channel ch, byte[] text) {
        if (ch.isActive() && ch.isWritable()) {
            ch.writeAndFlush(new TextWebSocketFrame(Unpooled.wrappedBuffer(text)), ch.voidPromise());
        }
    }

    /** Stops the snapshots, stops answering other nodes and closes every stats socket with 1001. */
    @Override
    public void close() {
        if (ticker != null) {
            ticker.cancel(false);
        }
        if (peers != null) {
            peers.close();
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
        } catch (IOException | SecurityException e) {
            return "unknown";
        }
    }
}
