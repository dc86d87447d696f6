package dev.crossbar.core.topic;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.relay.LoopGroup;
import dev.crossbar.core.relay.Member;
import dev.crossbar.core.replay.Replayed;
import dev.crossbar.core.replay.StreamMemory;
import dev.crossbar.core.route.StreamOptions;
import dev.crossbar.core.route.StreamRule;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.stats.ConnectionStats;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The members of one topic, with its receivers grouped by event loop.
 *
 * <p>Joins and leaves are O(1): they change a set under this topic's monitor and mark the views
 * stale. The views the send path and statistics read ({@link #groups()}, {@link #members()}) are
 * immutable arrays rebuilt on first read after a change, so a storm of 10,000 joins costs O(n) in
 * all, plus one O(n) rebuild per message published during it (which then fans out to n members
 * anyway), instead of an O(n) copy per join. Between changes the send path reads a volatile array:
 * no lock, no allocation.
 *
 * <p>A topic whose rule keeps messages for newcomers ({@code start=last}, {@code start=keyframe})
 * has a {@link StreamMemory}. A publish then records the message and reads the receivers under this
 * topic's monitor ({@link #record}), and a join adds the member and copies the memory under it
 * too ({@link #add}), so each message reaches a newcomer exactly once: in its replay, or live.
 */
public final class Topic {

    private static final LoopGroup[] NO_GROUPS = new LoopGroup[0];
    private static final Member[] NO_MEMBERS = new Member[0];

    private final TopicKey key;
    /** The rule this topic follows (null: none matched) and the options it gives. */
    private final StreamRule rule;
    private final StreamOptions options;
    /** What newcomers get first; null for live-only streams. Guarded by {@code this}. */
    private final StreamMemory memory;
    /** For {@code slow=backpressure}: who holds the senders back; null otherwise. */
    private final HoldBack holdBack;
    private final long createdAtMillis = System.currentTimeMillis();
    /** Every member, in join order. Guarded by {@code this}. */
    private final Set<Member> members = new LinkedHashSet<>();
    /** Members that may receive, and that may send. Guarded by {@code this}. */
    private int receivers;
    private int senders;
    /** Members per event loop, for placing new ones. Guarded by {@code this}. */
    private final Map<EventExecutor, Integer> perLoop = new HashMap<>();
    /** Set when {@link #members} changed after the views below were built. */
    private volatile boolean stale;
    private volatile LoopGroup[] groups = NO_GROUPS;
    private volatile Member[] snapshot = NO_MEMBERS;

    /** Totals of members that have left, so topic counts survive churn. Guarded by {@code this}. */
    private long departedMessagesIn;
    private long departedBytesIn;
    private long departedMessagesOut;
    private long departedBytesOut;
    private long departedDropped;
    private long departedRefused;

    Topic(TopicKey key) {
        this(key, null, StreamOptions.DEFAULT, null);
    }

    Topic(TopicKey key, StreamRule rule, StreamOptions options, StreamMemory memory) {
        this(key, rule, options, memory, dev.crossbar.core.broker.Broker.LOCAL);
    }

    /** As above; {@code broker} hears when this node's receivers hold a lossless stream back. */
    Topic(TopicKey key, StreamRule rule, StreamOptions options, StreamMemory memory,
          dev.crossbar.core.broker.Broker broker) {
        this.key = requireNonNull(key, "key");
        this.rule = rule;
        this.options = requireNonNull(options, "options");
        this.memory = memory;
        this.holdBack = options.lossless() ? new HoldBack(this, held -> broker.holdBack(key, held)) : null;
    }

    /** For a {@code slow=backpressure} stream, who holds its senders back; null for others. */
    public HoldBack holdBack() {
        return holdBack;
    }

    /** The routing rule this topic follows, or null when none matched (the default options). */
    public StreamRule rule() {
        return rule;
    }

    public StreamOptions options() {
        return options;
    }

    /** Whether publishing to this topic goes through {@link #record}. */
    public boolean remembers() {
        return memory != null;
    }

    /**
     * Records a message in the memory. The caller holds this topic's monitor and reads
     * {@link #groups()} under it too, so a join comes either before (the newcomer is among the
     * receivers and the message is not in its replay) or after (the message is in its replay).
     * Ownership: {@code payload} is borrowed.
     *
     * @return where a receiver may start in this message, or -1
     */
    int record(Object publisher, boolean text, ByteBuf payload) {
        // A message from another node may arrive after the last member left: keep nothing.
        return memory == null || members.isEmpty() ? -1 : memory.record(publisher, text, payload);
    }

    /** For statistics: what the memory holds now, or null when the topic keeps nothing. */
    public synchronized Map<String, Object> memoryState(long nowNanos) {
        return memory == null ? null : memory.describe(nowNanos);
    }

    public TopicKey key() {
        return key;
    }

    public long createdAtMillis() {
        return createdAtMillis;
    }

    /** Receivers grouped by loop, as of now; never contains an empty group. */
    public LoopGroup[] groups() {
        if (stale) {
            rebuild();
        }
        return groups;
    }

    /** Whether anyone in this topic sends (a 1:N stream may have only subscribers). */
    synchronized boolean hasSenders() {
        return senders > 0;
    }

    /** Whether anyone in this topic receives its messages (a 1:N stream may have only its publisher). */
    synchronized boolean hasReceivers() {
        return receivers > 0;
    }

    /** Every member, senders included, as of now. */
    public Member[] members() {
        if (stale) {
            rebuild();
        }
        return snapshot;
    }

    /** How many of its members may receive its messages now; O(1). */
    public synchronized int receiverCount() {
        return receivers;
    }

    /** How many members the topic has now; O(1). */
    public synchronized int size() {
        return members.size();
    }

    /** How many of its members live on {@code loop} now; O(1). */
    public synchronized int membersOn(EventExecutor loop) {
        return perLoop.getOrDefault(loop, 0);
    }

    /**
     * Adds the member and returns what it gets before the live messages (its replay; the caller
     * owns and releases each payload): empty for a live-only topic or a member that only sends.
     */
    synchronized List<Replayed> add(Member member) {
        if (members.add(member)) {
            perLoop.merge(member.executor(), 1, Integer::sum);
            if (member.route().canReceive()) {
                receivers++;
            }
            if (member.route().canSend()) {
                senders++;
            }
            stale = true;
            if (holdBack != null) {
                holdBack.joined(member);
            }
            if (memory != null && member.route().canReceive()) {
                return memory.replay();
            }
        }
        return Collections.emptyList();
    }

    /** Returns true if the topic is now empty. */
    synchronized boolean remove(Member member) {
        if (members.remove(member)) {
            perLoop.computeIfPresent(member.executor(), (loop, n) -> n == 1 ? null : n - 1);
            if (member.route().canReceive()) {
                receivers--;
            }
            if (member.route().canSend()) {
                senders--;
            }
            ConnectionStats s = member.stats();
            departedMessagesIn += s.messagesIn();
            departedBytesIn += s.bytesIn();
            departedMessagesOut += s.messagesOut();
            departedBytesOut += s.bytesOut();
            departedDropped += s.dropped();
            departedRefused += s.refused();
            stale = true;
            if (holdBack != null) {
                holdBack.left(member);
            }
            if (memory != null) {
                memory.forget(member);
                if (members.isEmpty()) {
                    memory.release();
                }
            }
        }
        return members.isEmpty();
    }

    synchronized boolean contains(Member member) {
        return members.contains(member);
    }

    synchronized boolean isEmpty() {
        return members.isEmpty();
    }

    /**
     * Totals over present and departed members: in, bytes in, out, bytes out, dropped, refused.
     * The monitor is held only to read a consistent pair (departed totals, member snapshot); the
     * members' counters are summed outside it, so a statistics reader never holds up a join.
     */
    public long[] totals() {
        long[] t;
        Member[] present;
        synchronized (this) {
            present = members();
            t = new long[] {departedMessagesIn, departedBytesIn, departedMessagesOut, departedBytesOut,
                    departedDropped, departedRefused};
        }
        for (Member m : present) {
            ConnectionStats s = m.stats();
            t[0] += s.messagesIn();
            t[1] += s.bytesIn();
            t[2] += s.messagesOut();
            t[3] += s.bytesOut();
            t[4] += s.dropped();
            t[5] += s.refused();
        }
        return t;
    }

    private synchronized void rebuild() {
        if (!stale) {
            return; // another reader rebuilt while we waited
        }
        Map<EventExecutor, List<Member>> byLoop = new LinkedHashMap<>();
        for (Member m : members) {
            if (m.route().canReceive()) {
                byLoop.computeIfAbsent(m.executor(), l -> new ArrayList<>()).add(m);
            }
        }
        LoopGroup[] next = new LoopGroup[byLoop.size()];
        int i = 0;
        for (Map.Entry<EventExecutor, List<Member>> e : byLoop.entrySet()) {
            next[i++] = new LoopGroup(e.getKey(), e.getValue().toArray(NO_MEMBERS));
        }
        groups = next;
        snapshot = members.toArray(NO_MEMBERS);
        // Last: a reader that sees the views fresh must see these arrays. No join or leave can
        // come between (they take this monitor too).
        stale = false;
    }

    @Override
    public String toString() {
        return "Topic(" + key + ")";
    }
}
