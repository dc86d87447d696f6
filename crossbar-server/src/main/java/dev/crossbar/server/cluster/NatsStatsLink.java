package dev.crossbar.server.cluster;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.stats.PeerLink;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Statistics between nodes over the broker's NATS connection: request-reply on subjects under
 * {@value #PREFIX}, apart from every topic's ({@code crossbar.<schema>.<token>}: a schema token has no
 * underscore), so one NATS permission {@code crossbar.>} covers both.
 *
 * <ul>
 *   <li>{@code crossbar._stats.all}: a summary request to every node (how nodes find each other);</li>
 *   <li>{@code crossbar._stats.node.<token>}: a request to this node only (a topic's client rows);</li>
 *   <li>{@code crossbar._stats.reply.<token>.<id>}: replies to this node's request {@code id}.</li>
 * </ul>
 * {@code <token>} is the node name encoded as a topic token is ({@link Subjects#topicToken}), so no name
 * reaches another's subject or a wildcard.
 *
 * <p>Bounds: a request is at most {@value #MAX_REQUEST_BYTES} bytes, a reply at most
 * {@link #maxReplyBytes()}; at most {@value #MAX_IN_FLIGHT} requests from other nodes wait to be
 * answered (more are dropped: the asker shows this node missing), and one request collects at most
 * {@value #MAX_REPLIES} replies. Every wait ends at its timeout.
 *
 * <p>Threads: one dispatcher thread of its own receives (never the broker's, so statistics never delay
 * messages); requests are answered, and replies handed over, on the statistics executor.
 */
public final class NatsStatsLink implements PeerLink {

    private static final Logger log = LoggerFactory.getLogger(NatsStatsLink.class);

    static final String PREFIX = "crossbar._stats.";
    static final String ALL = PREFIX + "all";
    /** Largest request accepted; a request is a few short fields. */
    static final int MAX_REQUEST_BYTES = 4096;
    /** Requests from other nodes queued for an answer at once. */
    static final int MAX_IN_FLIGHT = 64;
    /** Replies one request collects; a bound on memory should many nodes answer. */
    static final int MAX_REPLIES = 512;
    /** How often, until the broker has connected, the link checks whether it can subscribe. */
    private static final long BIND_CHECK_MILLIS = 200;

    private final NatsBroker broker;
    private final String node;
    private final EventExecutor executor;
    private final int maxReplyBytes;
    private final String replyPrefix;
    private final AtomicLong ids = new AtomicLong();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
    private volatile Function<byte[], byte[]> answer;
    private volatile Connection bound;
    private volatile boolean closed;
    private volatile Dispatcher dispatcher;
    private volatile ScheduledFuture<?> binder;

    /** One request's replies so far. */
    private static final class Pending {
        final int expected;
        final Consumer<List<byte[]>> done;
        final List<byte[]> replies = new ArrayList<>();

        Pending(int expected, Consumer<List<byte[]>> done) {
            this.expected = expected;
            this.done = done;
        }

        /** @return whether every expected reply is in */
        synchronized boolean add(byte[] data) {
            if (replies.size() < MAX_REPLIES) {
                replies.add(data);
            }
            return expected > 0 && replies.size() >= expected;
        }

        synchronized List<byte[]> taken() {
            return List.copyOf(replies);
        }
    }

    /**
     * @param executor the statistics thread: answers and replies are handed to it
     * @param maxReplyBytes the configured bound on a reply ({@code --stats-cluster-max-reply})
     */
    public NatsStatsLink(NatsBroker broker, String node, EventExecutor executor, int maxReplyBytes) {
        this.broker = requireNonNull(broker, "broker");
        this.node = requireNonNull(node, "node");
        this.executor = requireNonNull(executor, "executor");
        this.maxReplyBytes = maxReplyBytes;
        this.replyPrefix = PREFIX + "reply." + Subjects.topicToken(node);
    }

    static String nodeSubject(String node) {
        return PREFIX + "node." + Subjects.topicToken(node);
    }

    @Override
    public void serve(Function<byte[], byte[]> answer) {
        this.answer = requireNonNull(answer, "answer");
        binder = executor.scheduleWithFixedDelay(this::bind, 0, BIND_CHECK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Subscribes once the broker has a connection; the client re-subscribes by itself after reconnects. */
    private void bind() {
        Connection c = broker.connection();
        if (c == null || bound != null || closed) {
            return;
        }
        try {
            Dispatcher d = c.createDispatcher(this::onMessage);
            d.subscribe(ALL);
            d.subscribe(nodeSubject(node));
            d.subscribe(replyPrefix + ".*");
            dispatcher = d;
            bound = c;
            binder.cancel(false);
        } catch (IllegalStateException e) {
            log.debug("statistics link not bound yet: {}", e.toString());
        }
    }

    /** On the link's dispatcher thread: a request from another node, or a reply to one of ours. */
    private void onMessage(Message m) {
        String subject = m.getSubject();
        byte[] data = m.getData();
        if (subject.startsWith(replyPrefix)) {
            long id;
            try {
                id = Long.parseLong(subject.substring(replyPrefix.length() + 1));
            } catch (NumberFormatException e) {
                return;
            }
            Pending p = pending.get(id);
            if (p != null && data != null && p.add(data)) {
                executor.execute(() -> finish(id));
            }
            return;
        }
        String replyTo = m.getReplyTo();
        Function<byte[], byte[]> a = answer;
        if (replyTo == null || a == null || data == null || data.length > MAX_REQUEST_BYTES) {
            return;
        }
        if (inFlight.incrementAndGet() > MAX_IN_FLIGHT) {
            inFlight.decrementAndGet();
            return;
        }
        executor.execute(() -> {
            try {
                byte[] out = a.apply(data);
                Connection c = bound;
                if (out != null && c != null && !closed) {
                    c.publish(replyTo, out);
                }
            } catch (RuntimeException e) {
                log.debug("statistics request not answered: {}", e.toString());
            } finally {
                inFlight.decrementAndGet();
            }
        });
    }

    @Override
    public void gather(byte[] request, int expected, Duration timeout, Consumer<List<byte[]>> done) {
        // Never finished early: a node that joined since the last round must have the whole timeout to be found.
        send(List.of(ALL), request, 0, timeout, done);
    }

    @Override
    public void ask(Collection<String> nodes, byte[] request, Duration timeout, Consumer<List<byte[]>> done) {
        List<String> subjects = new ArrayList<>(nodes.size());
        for (String n : nodes) {
            subjects.add(nodeSubject(n));
        }
        send(subjects, request, subjects.size(), timeout, done);
    }

    private void send(List<String> subjects, byte[] request, int expected, Duration timeout, Consumer<List<byte[]>> done) {
        long id = ids.incrementAndGet();
        Pending p = new Pending(expected, done);
        pending.put(id, p);
        Connection c = bound;
        if (c != null && !closed && c.getStatus() == Connection.Status.CONNECTED) {
            try {
                for (String subject : subjects) {
                    c.publish(subject, replyPrefix + "." + id, request);
                }
            } catch (IllegalStateException e) {
                log.debug("statistics request not sent: {}", e.toString());
            }
        }
        // Without a link, the round still ends at its timeout: every known node is then shown missing.
        executor.schedule(() -> finish(id), timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Hands a request's replies over, once (the timeout and the last reply may both get here). */
    private void finish(long id) {
        Pending p = pending.remove(id);
        if (p != null) {
            p.done.accept(p.taken());
        }
    }

    @Override
    public int maxReplyBytes() {
        Connection c = bound;
        long server = c == null ? Long.MAX_VALUE : c.getMaxPayload();
        return (int) Math.min(maxReplyBytes, server);
    }

    /** Stops answering; pending requests end with what they have. */
    @Override
    public void close() {
        closed = true;
        if (binder != null) {
            binder.cancel(false);
        }
        Connection c = bound;
        Dispatcher d = dispatcher;
        if (c != null && d != null) {
            try {
                c.closeDispatcher(d);
            } catch (IllegalStateException e) {
                log.debug("statistics dispatcher already closed: {}", e.toString());
            }
        }
    }
}
