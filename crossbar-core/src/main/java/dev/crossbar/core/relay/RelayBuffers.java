package dev.crossbar.core.relay;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.NettyRuntime;

/**
 * The relay's one buffer policy: every buffer it makes (socket reads, message payloads and their
 * frames, the frames of other nodes' messages) comes from one pooled allocator, and each receiver
 * of a message writes a {@code retainedDuplicate()} of the one frame. A pooled buffer's duplicate
 * is an object from a recycler, given back when the receiver's socket has sent it: with any other
 * buffer a duplicate is garbage, one per message per receiver, which with a few hundred receivers
 * is most of what the relay allocates.
 *
 * <p>Sized for a small VM: 1 MiB chunks (8 KiB pages, order 7), one arena per core, caches on the
 * event loops only. Nothing is held until the first buffer is taken; after that each arena in use
 * keeps at least one chunk, and more only while that many bytes are in flight.
 */
public final class RelayBuffers {

    private static final int PAGE_SIZE = 8192;
    private static final int MAX_ORDER = 7;

    /** The allocator; also what the relay's channels allocate from. */
    public static final PooledByteBufAllocator ALLOCATOR = new PooledByteBufAllocator(true, 0,
            NettyRuntime.availableProcessors(), PAGE_SIZE, MAX_ORDER,
            PooledByteBufAllocator.defaultSmallCacheSize(), PooledByteBufAllocator.defaultNormalCacheSize(), false);

    private RelayBuffers() {
    }

    /** As a plain allocator. */
    public static ByteBufAllocator allocator() {
        return ALLOCATOR;
    }

    /** Its figures (used and cached memory, arenas), for metrics. */
    public static ByteBufAllocatorMetricProvider metrics() {
        return ALLOCATOR;
    }
}
