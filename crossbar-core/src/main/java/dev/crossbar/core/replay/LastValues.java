package dev.crossbar.core.replay;

import dev.crossbar.core.relay.RelayBuffers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code start=last}: the last message of each publisher, bounded in publishers and in bytes; when
 * over either bound, the publisher heard from longest ago is forgotten first. A message larger than
 * the byte bound on its own is not kept (its publisher's older value is dropped too: it is stale).
 *
 * <p>Ownership: each kept message is a copy in a buffer of its own, released when replaced,
 * forgotten or released with the topic. A copy, not a retained slice, because the message's bytes
 * usually share a read buffer many times their size, which a slice would keep alive.
 */
public final class LastValues implements StreamMemory {

    private final int maxPublishers;
    private final long maxBytes;
    /** In the order publishers were last heard from, oldest first. */
    private final LinkedHashMap<Object, Replayed> last = new LinkedHashMap<>();
    private long bytes;
    private long evicted;

    public LastValues(int maxPublishers, long maxBytes) {
        if (maxPublishers < 1 || maxBytes < 1) {
            throw new IllegalArgumentException("maxPublishers and maxBytes must be > 0");
        }
        this.maxPublishers = maxPublishers;
        this.maxBytes = maxBytes;
    }

    @Override
    public int record(Object publisher, boolean text, ByteBuf payload) {
        forget(publisher);
        int length = payload.readableBytes();
        if (length > maxBytes) {
            evicted++;
            return -1;
        }
        while (!last.isEmpty() && (last.size() >= maxPublishers || bytes + length > maxBytes)) {
            Iterator<Replayed> oldest = last.values().iterator();
            drop(oldest.next());
            oldest.remove();
            evicted++;
        }
        ByteBuf copy = RelayBuffers.ALLOCATOR.directBuffer(length, length);
        copy.writeBytes(payload, payload.readerIndex(), length);
        last.put(publisher, new Replayed(text, copy));
        bytes += length;
        return -1;
    }

    @Override
    public void forget(Object publisher) {
        Replayed old = last.remove(publisher);
        if (old != null) {
            drop(old);
        }
    }

    @Override
    public List<Replayed> replay() {
        List<Replayed> out = new ArrayList<>(last.size());
        for (Replayed r : last.values()) {
            out.add(new Replayed(r.text(), r.payload().retainedDuplicate()));
        }
        return out;
    }

    @Override
    public void release() {
        for (Replayed r : last.values()) {
            r.payload().release();
        }
        last.clear();
        bytes = 0;
    }

    @Override
    public Map<String, Object> describe(long nowNanos) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("messages", last.size());
        d.put("bytes", bytes);
        d.put("evicted", evicted);
        return d;
    }

    private void drop(Replayed r) {
        bytes -= r.payload().readableBytes();
        r.payload().release();
    }
}
