package dev.crossbar.core.topic;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.stats.ConnectionStats;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The members of one topic, with its receivers grouped by event loop.
 *
 * <p>Joins and leaves are rare and copy (under the registry's per-key lock); the send path only
 * reads the volatile {@link #groups()} array, so it takes no lock and allocates nothing here.
 */
public final class Topic {

    private static final LoopGroup[] NO_GROUPS = new LoopGroup[0];

    private final TopicKey key;
    private final long createdAtMillis = System.currentTimeMillis();
    private final List<Member> members = new ArrayList<>();
    private volatile LoopGroup[] groups = NO_GROUPS;
    private volatile Member[] snapshot = new Member[0];

    /** Totals of members that have left, so topic counts survive churn. Guarded by {@code this}. */
    private long departedMessagesIn;
    private long departedBytesIn;
    private long departedMessagesOut;
    private long departedBytesOut;
    private long departedDropped;
    private long departedRefused;

    Topic(TopicKey key) {
        this.key = requireNonNull(key, "key");
    }

    public TopicKey key() {
        return key;
    }

    public long createdAtMillis() {
        return createdAtMillis;
    }

    /** Receivers grouped by loop; never contains an empty group. */
    public LoopGroup[] groups() {
        return groups;
    }

    /** Whether anyone in this topic receives its messages (a 1:N stream may have only its publisher). */
    boolean hasReceivers() {
        return groups.length > 0;
    }

    /** Every member, senders included, as of now. */
    public Member[] members() {
        return snapshot;
    }

    synchronized void add(Member member) {
        members.add(member);
        rebuild();
    }

    /** Returns true if the topic is now empty. */
    synchronized boolean remove(Member member) {
        if (members.remove(member)) {
            ConnectionStats s = member.stats();
            departedMessagesIn += s.messagesIn();
            departedBytesIn += s.bytesIn();
            departedMessagesOut += s.messagesOut();
            departedBytesOut += s.bytesOut();
            departedDropped += s.dropped();
            departedRefused += s.refused();
            rebuild();
        }
        return members.isEmpty();
    }

    synchronized boolean contains(Member member) {
        return members.contains(member);
    }

    synchronized boolean isEmpty() {
        return members.isEmpty();
    }

    /** Totals over present and departed members: in, bytes in, out, bytes out, dropped, refused. */
    public synchronized long[] totals() {
        long[] t = {departedMessagesIn, departedBytesIn, departedMessagesOut, departedBytesOut,
                departedDropped, departedRefused};
        for (Member m : members) {
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

    private void rebuild() {
        Map<EventExecutor, List<Member>> byLoop = new LinkedHashMap<>();
        for (Member m : members) {
            if (m.route().canReceive()) {
                byLoop.computeIfAbsent(m.executor(), l -> new ArrayList<>()).add(m);
            }
        }
        LoopGroup[] next = new LoopGroup[byLoop.size()];
        int i = 0;
        for (Map.Entry<EventExecutor, List<Member>> e : byLoop.entrySet()) {
            next[i++] = new LoopGroup(e.getKey(), e.getValue().toArray(new Member[0]));
        }
        groups = next;
        snapshot = members.toArray(new Member[0]);
    }

    @Override
    public String toString() {
        return "Topic(" + key + ")";
    }
}
