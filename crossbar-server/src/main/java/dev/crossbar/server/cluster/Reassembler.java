package dev.crossbar.server.cluster;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * For one subscription: turns the NATS messages of each sending stream back into whole messages, in
 * order and once, and counts what went missing.
 *
 * <p>Per stream it remembers the last sequence number seen: a jump counts the messages in between as
 * lost, a number already seen is a duplicate and is dropped. Chunks of a large message arrive back to
 * back (one sender, one connection, NATS keeps its order); they are kept until the last one comes,
 * within {@code maxMessageBytes} per message and a byte budget shared by all subscriptions, and given
 * up (lost, counted) when a chunk is missing or the rest takes longer than {@link #PARTIAL_TIMEOUT}.
 * A stream first seen part-way through a message starts counting at the next one.
 *
 * <p>Not thread-safe: the owning subscription calls it under its own lock. Ownership: the buffers it
 * returns wrap the NATS message arrays (unpooled heap) and belong to the caller.
 */
final class Reassembler {

    /** Streams remembered per subscription, least recently seen forgotten first. */
    static final int MAX_STREAMS = 1024;
    /** How long the chunks of one message may take to arrive. */
    static final long PARTIAL_TIMEOUT = TimeUnit.SECONDS.toNanos(10);
    private static final long SWEEP_INTERVAL = TimeUnit.SECONDS.toNanos(1);

    /** A whole message, ready for local fan-out. */
    record Whole(boolean text, ByteBuf payload) {
    }

    private final int maxMessageBytes;
    private final long maxBufferedBytes;
    private final AtomicLong bufferedBytes;
    private final NatsStats stats;
    private final OwnStreams own;
    private final Map<Long, Stream> streams = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Stream> eldest) {
            if (size() > MAX_STREAMS) {
                abandon(eldest.getValue());
                return true;
            }
            return false;
        }
    };
    private int partials;
    private long lastSweep;

    /**
     * @param bufferedBytes shared count of bytes held for partial messages, bounded by {@code maxBufferedBytes}
     */
    Reassembler(int maxMessageBytes, long maxBufferedBytes, AtomicLong bufferedBytes, NatsStats stats) {
        this(maxMessageBytes, maxBufferedBytes, bufferedBytes, stats, new OwnStreams());
    }

    /** As above; messages of {@code own} streams (this node's, echoed back) are dropped as duplicates. */
    Reassembler(int maxMessageBytes, long maxBufferedBytes, AtomicLong bufferedBytes, NatsStats stats, OwnStreams own) {
        this.own = own;
        this.maxMessageBytes = maxMessageBytes;
        this.maxBufferedBytes = maxBufferedBytes;
        this.bufferedBytes = bufferedBytes;
        this.stats = stats;
    }

    private static final class Stream {
        /** This node's own stream, come back through a server it left: never delivered. */
        boolean own;
        long lastSeq;
        /** A message whose remaining chunks are to be ignored (already counted). */
        long skipSeq;
        /** The message being reassembled, or null. */
        List<ByteBuf> parts;
        long partialSeq;
        int nextPart;
        int received;
        int total;
        boolean text;
        long startedNanos;
    }

    /** Takes one NATS message's envelope and data; returns a whole message when one is complete. */
    Whole accept(Envelope e, byte[] data, long nowNanos) {
        if (partials > 0 && nowNanos - lastSweep > SWEEP_INTERVAL) {
            sweep(nowNanos);
        }
        Stream s = streams.get(e.stream);
        if (s == null) {
            s = new Stream();
            streams.put(e.stream, s);
            s.own = own.contains(e.stream);
            if (e.part > 0) {
                // Subscribed in the middle of a message: not ours to count.
                s.lastSeq = e.seq;
                s.skipSeq = e.seq;
                return null;
            }
            s.lastSeq = e.seq - 1;
        }
        if (s.own) {
            stats.recordDuplicate();
            return null;
        }
        return e.part == 0 ? first(s, e, data, nowNanos) : later(s, e, data);
    }

    private Whole first(Stream s, Envelope e, byte[] data, long nowNanos) {
        if (s.parts != null) {
            abandon(s);
        }
        if (e.seq <= s.lastSeq) {
            stats.recordDuplicate();
            return null;
        }
        if (e.seq > s.lastSeq + 1) {
            stats.recordLost(e.seq - s.lastSeq - 1);
        }
        s.lastSeq = e.seq;
        if (e.totalLength > maxMessageBytes) {
            stats.recordDroppedIn();
            s.skipSeq = e.seq;
            return null;
        }
        if (!e.more()) {
            if (e.payloadLength != e.totalLength) {
                stats.recordRejected();
                return null;
            }
            return new Whole(e.text(), Unpooled.wrappedBuffer(data, e.payloadOffset, e.payloadLength));
        }
        long before = bufferedBytes.getAndAdd(e.totalLength);
        if (before > 0 && before + e.totalLength > maxBufferedBytes) {
            bufferedBytes.getAndAdd(-e.totalLength);
            stats.recordDroppedIn();
            s.skipSeq = e.seq;
            return null;
        }
        s.parts = new ArrayList<>();
        s.parts.add(Unpooled.wrappedBuffer(data, e.payloadOffset, e.payloadLength));
        s.partialSeq = e.seq;
        s.nextPart = 1;
        s.received = e.payloadLength;
        s.total = e.totalLength;
        s.text = e.text();
        s.startedNanos = nowNanos;
        partials++;
        return null;
    }

    private Whole later(Stream s, Envelope e, byte[] data) {
        if (s.parts != null) {
            if (s.partialSeq == e.seq && e.part == s.nextPart && s.received + e.payloadLength <= s.total) {
                s.parts.add(Unpooled.wrappedBuffer(data, e.payloadOffset, e.payloadLength));
                s.nextPart++;
                s.received += e.payloadLength;
                if (e.more()) {
                    return null;
                }
                if (s.received != s.total) {
                    s.skipSeq = s.partialSeq;
                    abandon(s);
                    return null;
                }
                return complete(s);
            }
            s.skipSeq = s.partialSeq;
            abandon(s);
        }
        if (e.seq == s.skipSeq) {
            return null;
        }
        if (e.seq > s.lastSeq) {
            // This message's first chunk, and any message between, never came.
            stats.recordLost(e.seq - s.lastSeq);
            s.lastSeq = e.seq;
            s.skipSeq = e.seq;
            return null;
        }
        stats.recordDuplicate();
        return null;
    }

    private Whole complete(Stream s) {
        ByteBuf whole = Unpooled.wrappedBuffer(s.parts.size(), s.parts.toArray(new ByteBuf[0]));
        Whole w = new Whole(s.text, whole);
        release(s);
        return w;
    }

    /** Gives up the partial message of {@code s}, if any, and counts it lost. */
    private void abandon(Stream s) {
        if (s.parts != null) {
            for (ByteBuf b : s.parts) {
                b.release();
            }
            stats.recordLost(1);
            release(s);
        }
    }

    private void release(Stream s) {
        bufferedBytes.getAndAdd(-s.total);
        s.parts = null;
        partials--;
    }

    private void sweep(long nowNanos) {
        lastSweep = nowNanos;
        Iterator<Stream> it = streams.values().iterator();
        while (it.hasNext() && partials > 0) {
            Stream s = it.next();
            if (s.parts != null && nowNanos - s.startedNanos > PARTIAL_TIMEOUT) {
                s.skipSeq = s.partialSeq;
                abandon(s);
            }
        }
    }

    /** Partial messages held now; for tests. */
    int partials() {
        return partials;
    }

    /** Forgets every stream and gives up partial messages (the subscription has ended). */
    void close() {
        for (Stream s : streams.values()) {
            if (s.parts != null) {
                for (ByteBuf b : s.parts) {
                    b.release();
                }
                release(s);
            }
        }
        streams.clear();
    }
}
