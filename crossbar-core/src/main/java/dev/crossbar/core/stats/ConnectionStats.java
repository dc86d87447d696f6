package dev.crossbar.core.stats;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Counters of one connection.
 *
 * <p>Single writer: every {@code record*} method except {@link #recordDroppedElsewhere()} is called
 * only on the connection's event loop, so counting is a plain add published with an opaque store
 * (no lock, no CAS, no allocation); readers on other threads see each counter whole and at most a
 * moment old, which is all a statistics snapshot needs.
 */
public final class ConnectionStats {

    private static final VarHandle MESSAGES_IN;
    private static final VarHandle BYTES_IN;
    private static final VarHandle LAST_IN;
    private static final VarHandle MESSAGES_OUT;
    private static final VarHandle BYTES_OUT;
    private static final VarHandle LAST_OUT;
    private static final VarHandle DROPPED;
    private static final VarHandle REFUSED;
    private static final VarHandle DROPPED_ELSEWHERE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            MESSAGES_IN = lookup.findVarHandle(ConnectionStats.class, "messagesIn", long.class);
            BYTES_IN = lookup.findVarHandle(ConnectionStats.class, "bytesIn", long.class);
            LAST_IN = lookup.findVarHandle(ConnectionStats.class, "lastInNanos", long.class);
            MESSAGES_OUT = lookup.findVarHandle(ConnectionStats.class, "messagesOut", long.class);
            BYTES_OUT = lookup.findVarHandle(ConnectionStats.class, "bytesOut", long.class);
            LAST_OUT = lookup.findVarHandle(ConnectionStats.class, "lastOutNanos", long.class);
            DROPPED = lookup.findVarHandle(ConnectionStats.class, "dropped", long.class);
            REFUSED = lookup.findVarHandle(ConnectionStats.class, "refused", long.class);
            DROPPED_ELSEWHERE = lookup.findVarHandle(ConnectionStats.class, "droppedElsewhere", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final long connectedAtMillis;
    private final long connectedAtNanos;
    private long messagesIn;
    private long bytesIn;
    private long lastInNanos;
    private long messagesOut;
    private long bytesOut;
    private long lastOutNanos;
    private long dropped;
    private long refused;
    /**
     * Drops decided off the owning loop (its loop's backlog was full): rare, so an atomic add from
     * any thread rather than a LongAdder's 32 bytes and more on every connection.
     */
    private long droppedElsewhere;

    public ConnectionStats(long connectedAtMillis, long connectedAtNanos) {
        this.connectedAtMillis = connectedAtMillis;
        this.connectedAtNanos = connectedAtNanos;
    }

    public static ConnectionStats startingNow() {
        return new ConnectionStats(System.currentTimeMillis(), System.nanoTime());
    }

    /** A message received from this client; owner loop only. */
    public void recordIn(int bytes, long nowNanos) {
        MESSAGES_IN.setOpaque(this, messagesIn + 1);
        BYTES_IN.setOpaque(this, bytesIn + bytes);
        LAST_IN.setOpaque(this, nowNanos);
    }

    /**
     * A message written to this client; owner loop only. {@code nowNanos} may be when the message
     * entered the relay rather than when it was written (the router stamps each message once).
     */
    public void recordOut(int bytes, long nowNanos) {
        MESSAGES_OUT.setOpaque(this, messagesOut + 1);
        BYTES_OUT.setOpaque(this, bytesOut + bytes);
        LAST_OUT.setOpaque(this, nowNanos);
    }

    /** A message for this client dropped because it is not keeping up; owner loop only. */
    public void recordDropped() {
        DROPPED.setOpaque(this, dropped + 1);
    }

    /** A message for this client dropped before it reached the client's loop; any thread. */
    public void recordDroppedElsewhere() {
        DROPPED_ELSEWHERE.getAndAdd(this, 1L);
    }

    /** A message from this client dropped because its role may not send; owner loop only. */
    public void recordRefused() {
        REFUSED.setOpaque(this, refused + 1);
    }

    public long connectedAtMillis() {
        return connectedAtMillis;
    }

    public long connectedAtNanos() {
        return connectedAtNanos;
    }

    public long messagesIn() {
        return (long) MESSAGES_IN.getOpaque(this);
    }

    public long bytesIn() {
        return (long) BYTES_IN.getOpaque(this);
    }

    /** {@link System#nanoTime()} of the last message in, or 0 if none. */
    public long lastInNanos() {
        return (long) LAST_IN.getOpaque(this);
    }

    public long messagesOut() {
        return (long) MESSAGES_OUT.getOpaque(this);
    }

    public long bytesOut() {
        return (long) BYTES_OUT.getOpaque(this);
    }

    /** {@link System#nanoTime()} of the last message out, or 0 if none. */
    public long lastOutNanos() {
        return (long) LAST_OUT.getOpaque(this);
    }

    /** Messages meant for this client that it did not get (slow consumer). */
    /** Messages dropped because this client was over its own queue bound: its own slowness. */
    public long droppedOverBound() {
        return (long) DROPPED.getOpaque(this);
    }

    public long dropped() {
        return (long) DROPPED.getOpaque(this) + (long) DROPPED_ELSEWHERE.getVolatile(this);
    }

    /** Messages this client sent that were not relayed (its role may not send). */
    public long refused() {
        return (long) REFUSED.getOpaque(this);
    }
}
