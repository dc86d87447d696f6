package dev.crossbar.server.cluster;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The stream ids this node has sent under, so that it never takes its own messages for another
 * node's. NATS's {@code no_echo} holds per connection only: a server frozen while the node moved to
 * another still has what the node wrote on the old connection, and when it runs again it routes
 * those messages to the node's new connection like anyone's. A receiver asks once per stream id it
 * has not seen (never per message).
 *
 * <p>Bounded: the oldest of more than {@link #MAX_IDS} ids are forgotten (a node creates ids when a
 * topic starts to be sent, or a lossless stream starts anew). Thread-safe.
 */
final class OwnStreams {

    static final int MAX_IDS = 65_536;

    private final Set<Long> ids = ConcurrentHashMap.newKeySet();
    private final ConcurrentLinkedQueue<Long> order = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();

    /** Remembers {@code id} as this node's own. */
    void add(long id) {
        if (ids.add(id)) {
            order.add(id);
            if (size.incrementAndGet() > MAX_IDS) {
                Long oldest = order.poll();
                if (oldest != null) {
                    ids.remove(oldest);
                    size.decrementAndGet();
                }
            }
        }
    }

    /** Whether this node sent under {@code id}. */
    boolean contains(long id) {
        return ids.contains(id);
    }
}
