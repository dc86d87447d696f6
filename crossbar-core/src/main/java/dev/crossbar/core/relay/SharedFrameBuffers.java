package dev.crossbar.core.relay;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.NettyRuntime;

/**
 * Where the buffers of frames that receivers share are allocated: frames over
 * {@link #COPIED_MAX_BYTES}, which each receiver writes as a {@code retainedDuplicate()} instead of
 * copying them. Why a pool of their own: a duplicate of one of Netty's pooled buffers is an object
 * from a recycler, given back when the receiver's socket has sent it; a duplicate of any other
 * buffer (the adaptive allocator's, which the rest of the relay uses) is a new object every time,
 * one per message per receiver. Fanning 4,600-byte messages out to 100 receivers, those objects
 * were 81 % of what the relay allocated (async-profiler, allocation samples) and filled the young
 * generation every ~0.3 s, each collection a ~1 ms pause for every receiver.
 *
 * <p>Sized for frames up to {@link PreparedFrame#CONTIGUOUS_LIMIT}: 1 MiB chunks, one arena per
 * core (an event loop keeps to one), caches on the event loops only. Nothing is allocated until
 * the first such frame; after that each arena in use keeps at least one chunk, and more only while
 * that many frames are held (queued for receivers, or kept by a stream's memory).
 */
public final class SharedFrameBuffers {

    /**
     * Frames up to this size are copied by each receiver into a buffer of its own (coalesced with
     * the others it is sent before its next flush); larger ones are shared, one duplicate each.
     */
    public static final int COPIED_MAX_BYTES = 1024;

    private static final int PAGE_SIZE = 8192;
    /** Chunks of {@code PAGE_SIZE << MAX_ORDER} = 1 MiB: room for 15 of the largest contiguous frames. */
    private static final int MAX_ORDER = 7;
    static final PooledByteBufAllocator POOL = new PooledByteBufAllocator(true, 0,
            NettyRuntime.availableProcessors(), PAGE_SIZE, MAX_ORDER,
            PooledByteBufAllocator.defaultSmallCacheSize(), PooledByteBufAllocator.defaultNormalCacheSize(), false);

    private SharedFrameBuffers() {
    }

    /** The allocator for a frame of {@code frameLength} bytes: the pool if it will be shared, else {@code alloc}. */
    static ByteBufAllocator forFrame(ByteBufAllocator alloc, int frameLength) {
        return frameLength > COPIED_MAX_BYTES ? POOL : alloc;
    }

    /** The pool's figures (used and cached memory, arenas), for metrics. */
    public static ByteBufAllocatorMetricProvider metrics() {
        return POOL;
    }
}
