package dev.crossbar.core.topic;

import dev.crossbar.core.relay.Member;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code slow=backpressure}: while any receiver of the topic has more than its bound waiting, the
 * topic's senders are not read (their sockets fill, and TCP slows the clients); when every
 * receiver is back under its bound they are read again. Receivers report crossing their bound
 * ({@link #hold}, {@link #release}) from their own event loops; each sender applies the state on
 * its own loop ({@link Member#holdReading}), reading it when the task runs, so tasks from
 * different loops that arrive out of order still leave the sender as the state is now.
 *
 * <p>Across a cluster, other nodes' receivers hold this node's senders too ({@link #holdFor(String)}):
 * a change in whether this node's own receivers hold is told to the other nodes (the listener
 * given at construction, the broker), and theirs arrive here, repeated while they last, so a hold
 * from a node that is gone expires ({@link #expireRemote}). The link to other nodes holds them too
 * while it is behind ({@link #holdForLink}), so that it never has to drop a lossless message.
 *
 * <p>Also keeps, for statistics, how long the senders were held in all and by whom.
 */
public final class HoldBack {

    /** Who holds a stream's senders back: one of the stream's receivers here, another node, or the link. */
    public sealed interface Holder permits Receiver, Node, Link {
        /** How statistics name this holder. */
        String label();
    }

    /** A receiver on this node that has more than its bound waiting. */
    public record Receiver(Member member) implements Holder {
        @Override
        public String label() {
            return member.client().connectionId();
        }
    }

    /** Another node, whose receivers of this stream are behind. */
    public record Node(String name) implements Holder {
        @Override
        public String label() {
            return "node " + name;
        }
    }

    /** The link to other nodes while it is behind ({@link #holdForLink}). */
    public enum Link implements Holder {
        INSTANCE;

        @Override
        public String label() {
            return "cluster link";
        }
    }

    private final Topic topic;
    /** Told when whether this node's own receivers hold the senders changes (the cluster broker). */
    private final Consumer<Boolean> localHoldChanged;
    /** Who holds the senders now, and since when. Guarded by {@code this}. */
    private final Map<Holder, Long> holders = new LinkedHashMap<>();
    /** Other nodes holding now: when their hold was last repeated. Guarded by {@code this}. */
    private final Map<String, Long> remoteSeen = new HashMap<>();
    private int localHolders;
    /** Nanoseconds each holder present has held the senders, finished holds only. Guarded by {@code this}. */
    private final Map<Holder, Long> heldFor = new HashMap<>();
    private long heldSince;
    private long heldNanos;
    private volatile boolean held;

    HoldBack(Topic topic, Consumer<Boolean> localHoldChanged) {
        this.topic = topic;
        this.localHoldChanged = localHoldChanged;
    }

    /** Whether the senders are held now. */
    public boolean held() {
        return held;
    }

    /** {@code receiver} is over its bound: hold the senders if no one else was already. */
    public void hold(Member receiver) {
        add(new Receiver(receiver), true);
    }

    /** {@code receiver} is back under its bound, or gone: read the senders again if no one else holds them. */
    public void release(Member receiver) {
        remove(new Receiver(receiver), true);
    }

    /** Node {@code node}'s receivers hold this stream back; repeated while they do. */
    public void holdFor(String node) {
        synchronized (this) {
            remoteSeen.put(node, System.nanoTime());
        }
        add(new Node(node), false);
    }

    /** Node {@code node}'s receivers no longer hold this stream back. */
    public void releaseFor(String node) {
        synchronized (this) {
            remoteSeen.remove(node);
        }
        remove(new Node(node), false);
    }

    /**
     * Messages for other nodes wait past half the link's bound ({@code Broker#congested}): hold the
     * senders until the link has room again. Not told to other nodes: it is this node's link.
     */
    public void holdForLink() {
        add(Link.INSTANCE, false);
    }

    /** The link has room again. */
    public void releaseForLink() {
        remove(Link.INSTANCE, false);
    }

    /** Releases other nodes' holds not repeated within {@code maxAgeNanos}. */
    public void expireRemote(long maxAgeNanos) {
        long now = System.nanoTime();
        java.util.List<String> expired = new java.util.ArrayList<>();
        synchronized (this) {
            for (Iterator<Map.Entry<String, Long>> it = remoteSeen.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<String, Long> e = it.next();
                if (now - e.getValue() > maxAgeNanos) {
                    expired.add(e.getKey());
                    it.remove();
                }
            }
        }
        for (String node : expired) {
            remove(new Node(node), false);
        }
    }

    private void add(Holder holder, boolean local) {
        boolean changed;
        boolean localChanged = false;
        synchronized (this) {
            if (holders.containsKey(holder)) {
                return;
            }
            long now = System.nanoTime();
            holders.put(holder, now);
            if (local) {
                localChanged = ++localHolders == 1;
            }
            changed = holders.size() == 1;
            if (changed) {
                heldSince = now;
                held = true;
            }
        }
        if (changed) {
            applyToSenders();
        }
        if (localChanged) {
            localHoldChanged.accept(true);
        }
    }

    private void remove(Holder holder, boolean local) {
        boolean changed;
        boolean localChanged = false;
        synchronized (this) {
            Long since = holders.remove(holder);
            if (since == null) {
                return;
            }
            long now = System.nanoTime();
            heldFor.merge(holder, now - since, Long::sum);
            if (local) {
                localChanged = --localHolders == 0;
            }
            changed = holders.isEmpty();
            if (changed) {
                heldNanos += now - heldSince;
                held = false;
            }
        }
        if (changed) {
            applyToSenders();
        }
        if (localChanged) {
            localHoldChanged.accept(false);
        }
    }

    /** A member left: it holds nothing any more, and its share is no longer listed. */
    void left(Member member) {
        release(member);
        synchronized (this) {
            heldFor.remove(new Receiver(member));
        }
    }

    /** A sender that joins while the senders are held is held too. */
    void joined(Member member) {
        if (member.route().canSend() && held) {
            member.executor().execute(() -> member.holdReading(held));
        }
    }

    private void applyToSenders() {
        for (Member m : topic.members()) {
            if (m.route().canSend()) {
                m.executor().execute(() -> m.holdReading(held));
            }
        }
    }

    /** Nanoseconds the senders have been held in all, the current hold included. */
    public synchronized long heldNanos(long now) {
        return heldNanos + (holders.isEmpty() ? 0 : now - heldSince);
    }

    /** Per holder: for how long it has held the senders in all, the current hold included. */
    public synchronized Map<Holder, Long> heldBy(long now) {
        Map<Holder, Long> out = new LinkedHashMap<>();
        heldFor.forEach(out::put);
        holders.forEach((m, since) -> out.merge(m, now - since, Long::sum));
        return out;
    }
}
