package dev.crossbar.server.cluster;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.broker.Broker;
import dev.crossbar.core.broker.RemoteDelivery;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.server.config.NatsConfig;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.Consumer;
import io.nats.client.Dispatcher;
import io.nats.client.ErrorListener;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Broker} that joins nodes through NATS: one connection per node, one subscription per
 * topic this node has receivers on, one publish per message.
 *
 * <p>Threads: event loops only queue work here ({@link #interest}, {@link #noInterest},
 * {@link #publish} never block and never call the NATS client). One engine thread
 * ({@code crossbar-nats}) connects, subscribes, unsubscribes and publishes, in the order the work was
 * queued, so a sender's messages leave in order and a topic's interest changes are applied in the
 * order they happened. The client's dispatcher thread receives and hands whole messages to the
 * router. The client reconnects by itself (without limit, trying every known server of the cluster)
 * and re-subscribes; meanwhile local relaying goes on and {@link #degradedReason()} says why the
 * node is degraded.
 *
 * <p>Back-pressure: bytes waiting for NATS are bounded twice by {@link NatsConfig#maxPendingBytes()}:
 * in this queue (a message that does not fit is dropped whole and counted; an empty queue always takes
 * one message) and in the client's outgoing buffer (the engine waits for room, so this queue fills
 * instead). The client buffers up to the same bound while reconnecting.
 *
 * <p>Lossless streams ({@code slow=backpressure}) take another way through the engine, the
 * {@link LosslessLink}: numbered, kept until acknowledged, sent again, or declared lost. What it
 * keeps counts in this queue's bound; a lossless message that does not fit is a verdict, not a
 * silent drop. Ordinary streams pay nothing for it per message.
 *
 * <p>Ownership: {@link #publish} takes the payload reference and releases it once the bytes are
 * copied into NATS messages, or when the message is dropped.
 */
public final class NatsBroker implements Broker, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NatsBroker.class);

    /** Counted against the pending bound for each message besides its bytes, so empty messages are bounded too. */
    static final int MESSAGE_OVERHEAD_BYTES = 64;
    /** Topics this node remembers sequence numbers for as a sender, least recently used forgotten first. */
    static final int MAX_OUT_STREAMS = 4096;
    /** Longest pause between attempts while no server has ever answered. */
    private static final Duration MAX_CONNECT_BACKOFF = Duration.ofSeconds(5);
    /** How long {@link #close()} waits for the engine thread. */
    private static final long CLOSE_WAIT_MILLIS = 5000;

    /** Where the link stands. */
    public enum State {
        /** Not yet connected since start-up. */
        CONNECTING,
        CONNECTED,
        /** The link was lost; the client is trying every known server. */
        RECONNECTING,
        CLOSED
    }

    private sealed interface Op permits Publish, Interest, Hold, HoldInterest, Overflow, Task {
    }

    /** A lossless message did not fit the bound: lost, and to be said so. */
    private record Overflow(TopicKey key) implements Op {
    }

    /** Work for the engine from another thread (acknowledgements of lossless streams). */
    private record Task(Runnable run) implements Op {
    }

    /** This node has senders on a lossless topic, or no longer has. */
    private record HoldInterest(TopicKey key, boolean on) implements Op {
    }

    /** This node's receivers of a lossless topic hold it back, or no longer do. */
    private record Hold(TopicKey key, boolean held) implements Op {
    }

    private record Publish(TopicKey key, boolean text, ByteBuf payload, int cost, boolean lossless) implements Op {
    }

    private record Interest(TopicKey key, boolean on, boolean lossless) implements Op {
    }

    /** A topic as this node sends it: subject, key bytes (hashed subjects only), stream id and sequence. */
    private static final class OutStream {
        final String subject;
        final byte[] keyBytes;
        final long id;
        long seq;

        OutStream(TopicKey key, long id) {
            this.subject = Subjects.subject(key);
            this.keyBytes = Subjects.isHashed(subject) ? key.toString().getBytes(StandardCharsets.UTF_8) : null;
            this.id = id;
        }
    }

    private final NatsConfig config;
    private final String nodeName;
    private final int maxMessageBytes;
    private final Options options;
    private final NatsStats stats = new NatsStats();
    private final WarnOnce warnings = new WarnOnce(log);
    private final LinkedBlockingQueue<Op> ops = new LinkedBlockingQueue<>();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicLong reassemblyBytes = new AtomicLong();
    private final SecureRandom random = new SecureRandom();
    private final Thread engine;
    private volatile RemoteDelivery delivery;
    private volatile Connection connection;
    private volatile State state = State.CONNECTING;
    private volatile boolean closing;
    private volatile boolean stopped;
    private volatile int subscriptionCount;
    /** Counts the link's comebacks (the client's RECONNECTED), for the engine to resend after each. */
    private volatile int linkEpoch;
    /**
     * The client's outgoing buffer as the engine last read it (after every operation): event loops
     * read this, never the client, whose lock is held for as long as it reconnects.
     */
    private volatile long clientPendingBytes;
    private volatile long upSinceNanos;
    private volatile long downSinceNanos;
    private final LosslessLink lossless;
    /** The stream ids this node sends under: its own messages, echoed back, are never delivered here. */
    private final OwnStreams own = new OwnStreams();

    // Engine thread only.
    private Dispatcher dispatcher;
    private HoldSignals holds;
    private int seenEpoch;
    private final Map<TopicKey, TopicSubscription> subscriptions = new HashMap<>();
    private final Map<TopicKey, OutStream> outStreams = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<TopicKey, OutStream> eldest) {
            return size() > MAX_OUT_STREAMS;
        }
    };

    /**
     * Prepares a broker; nothing connects until {@link #start}.
     *
     * @param maxMessageBytes the node's largest message: larger ones from other nodes are refused
     * @throws IllegalArgumentException naming the setting, when the client options are invalid
     */
    public NatsBroker(NatsConfig config, String nodeName, int maxMessageBytes) {
        this.config = requireNonNull(config, "config");
        this.nodeName = requireNonNull(nodeName, "nodeName");
        this.maxMessageBytes = maxMessageBytes;
        this.options = options(config, nodeName);
        this.lossless = new LosslessLink(nodeName, stats, warnings, config.losslessTimeout().toNanos(),
                r -> ops.add(new Task(r)), this::tryPublish, random, own);
        this.engine = new Thread(this::run, "crossbar-nats");
        this.engine.setDaemon(true);
    }

    private Options options(NatsConfig c, String name) {
        Options.Builder b = NatsOptions.base(c, name)
                // A node never receives its own publishes: its local members had them already.
                .noEcho()
                // The servers in the order given: the nearest first, as operators are told to list them.
                .noRandomize()
                .pingInterval(c.pingInterval())
                .reconnectBufferSize(c.maxPendingBytes())
                .connectionListener(this::onConnectionEvent)
                .errorListener(new Errors());
        try {
            return b.build();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new IllegalArgumentException("nats: " + e.getMessage(), e);
        }
    }

    /** Starts connecting in the background; messages from other nodes go to {@code delivery}. */
    public void start(RemoteDelivery delivery) {
        this.delivery = requireNonNull(delivery, "delivery");
        log.info("Cluster link starting: node '{}' via {}", nodeName, config);
        engine.start();
    }

    // ---- Broker: called on event loops, never blocks ----

    @Override
    public void interest(TopicKey topic) {
        ops.add(new Interest(topic, true, false));
    }

    @Override
    public void interest(TopicKey topic, boolean lossless) {
        ops.add(new Interest(topic, true, lossless));
    }

    @Override
    public void noInterest(TopicKey topic) {
        ops.add(new Interest(topic, false, false));
    }

    @Override
    public void holdBack(TopicKey topic, boolean held) {
        ops.add(new Hold(topic, held));
    }

    @Override
    public void holdInterest(TopicKey topic, boolean on) {
        ops.add(new HoldInterest(topic, on));
    }

    /**
     * Past half the bound: lossless senders are held (see {@link Broker#congested}). What counts is
     * all this node has in flight, this queue, the client's outgoing buffer and the lossless
     * messages kept until acknowledged: the receiving nodes' clients take at most the same bound at
     * once, so in flight stays within it.
     */
    @Override
    public boolean congested() {
        return inFlightBytes() > config.maxPendingBytes() / 2;
    }

    /**
     * While connected, everything on its way; while not, only the lossless messages kept (they wait
     * for the link, and so do their senders); the rest is dropped and counted as for any stream, and
     * holding for it would hold for nothing. Any thread, never blocks.
     */
    private long inFlightBytes() {
        long kept = lossless.heldBytes();
        return state != State.CONNECTED ? kept : queuedBytes.get() + kept + clientPendingBytes;
    }

    /**
     * Whether the link is up, asked without a lock: the client holds the lock that
     * {@link Connection#outgoingPendingBytes()} takes for as long as it is reconnecting, so the engine
     * (the only thread that makes that call) makes it only after this says yes.
     */
    private boolean linkUp(Connection c) {
        return state == State.CONNECTED && c != null && c.getStatus() == Connection.Status.CONNECTED;
    }

    /**
     * Engine thread, after every operation and at least every 100 ms: senders held for the link are
     * read again once it is down to a quarter of its bound.
     */
    private void relieveLink() {
        Connection c = connection;
        clientPendingBytes = linkUp(c) ? c.outgoingPendingBytes() : 0;
        RemoteDelivery d = delivery;
        if (d != null && inFlightBytes() <= config.maxPendingBytes() / 4) {
            d.linkRelieved();
        }
    }

    @Override
    public void publish(TopicKey topic, boolean text, ByteBuf payload) {
        int cost = payload.readableBytes() + MESSAGE_OVERHEAD_BYTES;
        long before = queuedBytes.getAndAdd(cost);
        if (stopped || (before > 0 && before + cost > config.maxPendingBytes())) {
            queuedBytes.getAndAdd(-cost);
            payload.release();
            stats.recordDroppedOut();
            warnings.warn("full", "dropping messages for other nodes: {} bytes already wait for NATS (state {})",
                    before, state);
            return;
        }
        ops.add(new Publish(topic, text, payload, cost, false));
        if (stopped) {
            // Raced with the engine's exit: nobody else will release what is queued.
            discardQueued();
        }
    }

    /**
     * A lossless stream's message: as above, but within the bound together with what the lossless
     * link keeps, and one that does not fit is lost with a verdict (its clients closed), never dropped
     * silently. An empty link always takes one message.
     */
    @Override
    public void publish(TopicKey topic, boolean text, ByteBuf payload, boolean lossless) {
        if (!lossless) {
            publish(topic, text, payload);
            return;
        }
        int cost = payload.readableBytes() + MESSAGE_OVERHEAD_BYTES;
        long before = queuedBytes.getAndAdd(cost) + this.lossless.heldBytes();
        if (stopped || (before > 0 && before + cost > config.maxPendingBytes())) {
            queuedBytes.getAndAdd(-cost);
            payload.release();
            stats.recordDroppedOut();
            if (!stopped) {
                ops.add(new Overflow(topic));
            }
            return;
        }
        ops.add(new Publish(topic, text, payload, cost, true));
        if (stopped) {
            discardQueued();
        }
    }

    // ---- engine thread ----

    private void run() {
        try {
            Connection c = connect();
            if (c == null) {
                return;
            }
            connection = c;
            while (!closing) {
                Op op = ops.poll(100, TimeUnit.MILLISECONDS);
                if (op instanceof Publish p) {
                    send(c, p);
                } else if (op instanceof Interest i) {
                    changeInterest(i);
                } else if (op instanceof Hold h) {
                    holds.changed(c, h.key(), h.held());
                } else if (op instanceof HoldInterest h) {
                    holds.listen(h.key(), h.on());
                    lossless.listen(h.key(), h.on(), System.nanoTime());
                } else if (op instanceof Overflow o) {
                    lossless.overflow(o.key());
                } else if (op instanceof Task t) {
                    t.run().run();
                }
                holds.tick(c);
                if (lossless.active()) {
                    tickLossless();
                }
                relieveLink();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.error("Cluster link engine stopped by an unexpected error; this node now relays locally only", e);
        } finally {
            if (closing && state == State.CONNECTED) {
                lossless.farewell();
            }
            stopped = true;
            discardQueued();
        }
    }

    /** Resends after the link came back, then the lossless link's timers. */
    private void tickLossless() {
        long now = System.nanoTime();
        int epoch = linkEpoch;
        boolean connected = state == State.CONNECTED;
        if (epoch != seenEpoch && connected) {
            seenEpoch = epoch;
            lossless.linkBack(now);
        }
        lossless.tick(connected, upSinceNanos, downSinceNanos, now);
    }

    /**
     * Connects, retrying with backoff until a server answers or the broker closes; null if closed.
     * Meanwhile interest changes are folded into the set of topics to subscribe once connected, and
     * messages are dropped (counted): there is nowhere to send them, and nothing grows without bound.
     */
    private Connection connect() throws InterruptedException {
        long waitMillis = config.reconnectWait().toMillis();
        // Topics to subscribe once connected, each with whether it is lossless.
        Map<TopicKey, Boolean> wanted = new LinkedHashMap<>();
        java.util.Set<TopicKey> wantedHolds = new java.util.LinkedHashSet<>();
        while (!closing) {
            try {
                Connection c = Nats.connect(options);
                if (closing) {
                    c.close();
                    return null;
                }
                connection = c; // before re-subscribing: lossless subscriptions say they are there at once
                dispatcher = c.createDispatcher();
                // Bounded in bytes, not in count: what the dispatcher cannot hold is dropped by the
                // client and shows up here as a gap in a stream's sequence, counted as lost.
                dispatcher.setPendingLimits(-1, config.maxPendingBytes());
                holds = new HoldSignals(nodeName, delivery, dispatcher);
                lossless.attach(dispatcher, delivery);
                for (TopicKey key : wantedHolds) {
                    holds.listen(key, true);
                    lossless.listen(key, true, System.nanoTime());
                }
                for (Map.Entry<TopicKey, Boolean> w : wanted.entrySet()) {
                    changeInterest(new Interest(w.getKey(), true, w.getValue()));
                }
                return c;
            } catch (IOException e) {
                state = State.CONNECTING;
                warnings.warn("connect", "NATS not reachable ({}): {}; relaying locally and retrying",
                        config, e.getMessage());
            }
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
            long left;
            while (!closing && (left = until - System.nanoTime()) > 0) {
                Op op = ops.poll(left, TimeUnit.NANOSECONDS);
                if (op instanceof Interest i) {
                    if (i.on()) {
                        wanted.put(i.key(), i.lossless());
                    } else {
                        wanted.remove(i.key());
                    }
                } else if (op instanceof HoldInterest h) {
                    if (h.on()) {
                        wantedHolds.add(h.key());
                    } else {
                        wantedHolds.remove(h.key());
                    }
                } else if (op instanceof Publish p) {
                    // Lossless too: before the first connection no receiving node can be known.
                    p.payload().release();
                    queuedBytes.getAndAdd(-p.cost());
                    stats.recordDroppedOut();
                }
            }
            waitMillis = Math.min(waitMillis * 2, MAX_CONNECT_BACKOFF.toMillis());
        }
        return null;
    }

    private void send(Connection c, Publish p) {
        ByteBuf payload = p.payload();
        try {
            // The client's own buffer is bounded by waiting here (the call itself waits while the
            // client's writer is stuck on a stalled socket): meanwhile this queue fills and event
            // loops drop whole messages, counted. Not while the link is down: the client refuses
            // what its reconnect buffer cannot take, and the engine's timers must go on.
            while (linkUp(c) && c.outgoingPendingBytes() >= config.maxPendingBytes() && !closing) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            if (p.lossless()) {
                lossless.send(state == State.CONNECTED, c.getMaxPayload(), p.key(), p.text(), payload, p.cost(),
                        System.nanoTime());
                return;
            }
            OutStream out = outStreams.computeIfAbsent(p.key(), k -> {
                long id = random.nextLong();
                own.add(id);
                return new OutStream(k, id);
            });
            int length = payload.readableBytes();
            int header = Envelope.headerLength(out.keyBytes);
            long room = c.getMaxPayload() - header;
            if (room <= 0) {
                throw new IllegalArgumentException("server max_payload " + c.getMaxPayload() + " leaves no room after the "
                        + header + "-byte envelope");
            }
            long seq = ++out.seq;
            int offset = 0;
            int part = 0;
            do {
                int n = (int) Math.min(room, length - offset);
                boolean more = offset + n < length;
                byte[] data = new byte[header + n];
                Envelope.writeHeader(data, p.text(), more, out.id, seq, part, length, out.keyBytes);
                payload.getBytes(payload.readerIndex() + offset, data, header, n);
                c.publish(out.subject, data);
                offset += n;
                part++;
            } while (offset < length);
            stats.recordSent(length);
        } catch (IllegalStateException | IllegalArgumentException e) {
            // Closed, reconnect buffer full, or the client's queue stayed full: the message is lost here.
            stats.recordDroppedOut();
            warnings.warn("publish", "dropping a message for other nodes: {}", e.getMessage());
        } finally {
            payload.release();
            queuedBytes.getAndAdd(-p.cost());
        }
    }

    private void changeInterest(Interest i) {
        try {
            if (i.on()) {
                if (!subscriptions.containsKey(i.key())) {
                    String subject = Subjects.subject(i.key());
                    Inbox inbox = !i.lossless() ? null : new Inbox(random.nextLong(), nodeName, i.key(), delivery,
                            this::tryPublish, stats, maxMessageBytes, config.maxPendingBytes(), reassemblyBytes,
                            config.losslessTimeout().toNanos(), own);
                    TopicSubscription s = new TopicSubscription(i.key(), subject,
                            new Reassembler(maxMessageBytes, config.maxPendingBytes(), reassemblyBytes, stats, own),
                            inbox, delivery, stats, warnings);
                    s.bind(dispatcher.subscribe(subject, s));
                    subscriptions.put(i.key(), s);
                    if (inbox != null) {
                        lossless.received(s, true); // after the subscription: it is owed what is sent from now on
                    }
                    if (log.isDebugEnabled()) {
                        log.debug("subscribed {} for {}", subject, i.key());
                    }
                }
            } else {
                TopicSubscription s = subscriptions.remove(i.key());
                if (s != null) {
                    dispatcher.unsubscribe(s.subscription());
                    s.close();
                    if (s.lossless()) {
                        lossless.received(s, false);
                    }
                    if (log.isDebugEnabled()) {
                        log.debug("unsubscribed {}", i.key());
                    }
                }
            }
        } catch (IllegalStateException | IllegalArgumentException e) {
            warnings.warn("subscribe", "cannot change the subscription for {}: {}", i.key(), e.getMessage());
        } finally {
            subscriptionCount = subscriptions.size();
        }
    }

    private void discardQueued() {
        Op op;
        while ((op = ops.poll()) != null) {
            if (op instanceof Publish p) {
                p.payload().release();
                queuedBytes.getAndAdd(-p.cost());
                stats.recordDroppedOut();
            }
        }
    }

    /**
     * Publishes on the connection as it is now, for the lossless link's lines and records: false if
     * the client refused (closed, reconnect buffer full); what matters is repeated or sent again.
     */
    private boolean tryPublish(String subject, byte[] data) {
        Connection c = connection;
        if (c == null) {
            return false;
        }
        try {
            c.publish(subject, data);
            return true;
        } catch (IllegalStateException | IllegalArgumentException e) {
            log.debug("not published on {}: {}", subject, e.toString());
            return false;
        }
    }

    // ---- NATS client callbacks ----

    private void onConnectionEvent(Connection c, ConnectionListener.Events type) {
        switch (type) {
            case CONNECTED -> {
                upSinceNanos = System.nanoTime();
                state = State.CONNECTED;
                warnings.reset("connect");
                log.info("Cluster link up: node '{}' connected to {} (max_payload {} bytes)", nodeName,
                        NatsConfig.redactUrl(String.valueOf(c.getConnectedUrl())), c.getMaxPayload());
            }
            case DISCONNECTED -> {
                // The client reports every failed attempt too; say it once per outage.
                if (!closing && state == State.CONNECTED) {
                    downSinceNanos = System.nanoTime();
                    state = State.RECONNECTING;
                    log.warn("Cluster link lost; relaying locally and reconnecting");
                }
            }
            case RECONNECTED -> {
                upSinceNanos = System.nanoTime();
                linkEpoch++; // the engine looks for a change only
                state = State.CONNECTED;
                stats.recordReconnect();
                warnings.reset("publish");
                log.info("Cluster link back: connected to {}", NatsConfig.redactUrl(String.valueOf(c.getConnectedUrl())));
            }
            case RESUBSCRIBED -> log.debug("Cluster link: subscriptions re-established");
            case LAME_DUCK -> log.info("Cluster link: server {} is shutting down; moving to another",
                    NatsConfig.redactUrl(String.valueOf(c.getConnectedUrl())));
            case CLOSED -> {
                // A start-up attempt that failed closes its connection too (the loop in connect()
                // then retries): the link is still connecting, not closed, and /healthz says so.
                if (state != State.CONNECTING) {
                    state = State.CLOSED;
                }
            }
            default -> log.debug("Cluster link event {}", type);
        }
    }

    /** Client errors to SLF4J, once per kind; drops it reports are counted. */
    private final class Errors implements ErrorListener {
        @Override
        public void errorOccurred(Connection conn, String error) {
            warnings.warn("server:" + error, "NATS server error: {}", error);
        }

        @Override
        public void exceptionOccurred(Connection conn, Exception exp) {
            if (closing) {
                log.debug("NATS client while closing: {}", exp.toString());
                return;
            }
            warnings.warn("exception:" + exp.getClass().getName(), "NATS client: {}", exp.toString());
        }

        @Override
        public void slowConsumerDetected(Connection conn, Consumer consumer) {
            warnings.warn("slow", "NATS messages arrive faster than this node hands them out; "
                    + "the excess is dropped and counted as lost");
        }

        @Override
        public void messageDiscarded(Connection conn, Message msg) {
            stats.recordDroppedOut();
        }

        @Override
        public void socketWriteTimeout(Connection conn) {
            warnings.warn("write-timeout", "NATS server is not reading; the client will reconnect");
        }
    }

    // ---- state for health and metrics ----

    public NatsStats stats() {
        return stats;
    }

    public State state() {
        return state;
    }

    public String nodeName() {
        return nodeName;
    }

    /** Null while the link is up; otherwise one line for {@code /healthz}. */
    public String degradedReason() {
        State s = state;
        return s == State.CONNECTED ? null : "cluster link " + s.name().toLowerCase(java.util.Locale.ROOT)
                + "; relaying to local clients only";
    }

    /**
     * Bytes queued here for the engine, not yet handed to the NATS client. (The client's own buffer,
     * bounded by the same figure, is not included: reading it takes a lock its writer holds while a
     * stalled socket write lasts, and a gauge must never block.)
     */
    public long pendingBytes() {
        return queuedBytes.get();
    }

    /** Bytes of lossless messages kept until the receiving nodes acknowledge them. */
    public long losslessHeldBytes() {
        return lossless.heldBytes();
    }

    /** Topics this node is subscribed to now. */
    public int subscriptions() {
        return subscriptionCount;
    }

    /** The client connection once the first connect succeeded (it then reconnects by itself), or null. */
    Connection connection() {
        return connection;
    }

    /** The server this node is connected to (credentials hidden), or null. */
    public String connectedUrl() {
        Connection c = connection;
        String url = c == null ? null : c.getConnectedUrl();
        return url == null ? null : NatsConfig.redactUrl(url);
    }

    /** Stops the engine, closes the connection (every subscription with it) and releases what was queued. */
    @Override
    public void close() {
        if (closing) {
            return;
        }
        closing = true;
        engine.interrupt();
        try {
            engine.join(CLOSE_WAIT_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Connection c = connection;
        if (c != null) {
            try {
                c.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (!engine.isAlive()) {
            for (TopicSubscription s : subscriptions.values()) {
                s.close();
            }
        }
        state = State.CLOSED;
        discardQueued();
        if (!engine.isAlive()) {
            lossless.close();
        }
        log.info("Cluster link closed: {} messages out, {} in, {} dropped out, {} lost in", stats.messagesOut(),
                stats.messagesIn(), stats.droppedOut(), stats.lostIn());
    }
}
