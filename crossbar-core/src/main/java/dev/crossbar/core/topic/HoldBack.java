package dev.crossbar.core.topic;

import dev.crossbar.core.relay.Member;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code slow=backpressure}: while any receiver of the topic has more than its bound waiting, the
 * topic's senders are not read (their sockets fill, and TCP slows the clients); when every
 * receiver is back under its bound they are read again. Receivers report crossing their bound
 * ({@link #hold}, {@link #release}) from their own event loops; each sender applies the state on
 * its own loop ({@link Member#holdReading}), reading it when the task runs, so tasks from
 * different loops that arrive out of order still leave the sender as the state is now.
 *
 * <p>Also keeps, for statistics, how long the senders were held in all and by whom.
 */
public final class HoldBack {

    private final Topic topic;
    /** Receivers over their bound now, and since when. Guarded by {@code this}. */
    private final Map<Member, Long> holders = new LinkedHashMap<>();
    /** Nanoseconds each member present has held the senders, finished holds only. Guarded by {@code this}. */
    private final Map<Member, Long> heldFor = new IdentityHashMap<>();
    private long heldSince;
    private long heldNanos;
    private volatile boolean held;

    HoldBack(Topic topic) {
        this.topic = topic;
    }

    /** Whether the senders are held now. */
    public boolean held() {
        return held;
    }

    /** {@code receiver} is over its bound: hold the senders if no one else was already. */
    public void hold(Member receiver) {
        boolean changed;
        synchronized (this) {
            if (holders.containsKey(receiver)) {
                return;
            }
            long now = System.nanoTime();
            holders.put(receiver, now);
            changed = holders.size() == 1;
            if (changed) {
                heldSince = now;
                held = true;
            }
        }
        if (changed) {
            applyToSenders();
        }
    }

    /** {@code receiver} is back under its bound, or gone: read the senders again if no one else holds them. */
    public void release(Member receiver) {
        boolean changed;
        synchronized (this) {
            Long since = holders.remove(receiver);
            if (since == null) {
                return;
            }
            long now = System.nanoTime();
            heldFor.merge(receiver, now - since, Long::sum);
            changed = holders.isEmpty();
            if (changed) {
                heldNanos += now - heldSince;
                held = false;
            }
        }
        if (changed) {
            applyToSenders();
        }
    }

    /** A member left: it holds nothing any more, and its share is no longer listed. */
    void left(Member member) {
        release(member);
        synchronized (this) {
            heldFor.remove(member);
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

    /** Per member that has held the senders: for how long in all, the current hold included. */
    public synchronized Map<Member, Long> heldByMember(long now) {
        Map<Member, Long> out = new LinkedHashMap<>();
        heldFor.forEach(out::put);
        holders.forEach((m, since) -> out.merge(m, now - since, Long::sum));
        return out;
    }
}
