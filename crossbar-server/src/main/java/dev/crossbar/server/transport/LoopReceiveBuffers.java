package dev.crossbar.server.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * Receive buffers sized as Netty's {@link AdaptiveRecvByteBufAllocator} sizes them, but reused from
 * one read to the next on each event loop instead of taken from the allocator and given back on
 * every read. A relay with small messages reads a few hundred bytes per wake-up; taking a pooled
 * buffer and returning it (the allocator's locked magazine in its low-memory mode, the buffer
 * object's recycler) cost about as much as the decoding of what was read.
 *
 * <p>One buffer per loop, not per connection: reads on a loop are sequential, so an idle connection
 * holds nothing.
 *
 * <p>Ownership: the loop keeps one reference to its buffer; a read borrows it with one more
 * ({@code retain}), which the pipeline releases exactly as it would a fresh buffer. The buffer is lent
 * again only when the loop's reference is the last one ({@code refCnt() == 1}): while anything
 * downstream still holds it (a decoder keeping a partial frame, a payload slice on its way to
 * another loop), the next read takes a fresh buffer, which becomes the loop's, and the old one is
 * freed by its last holder. The loop's reference is released when the loop's thread ends.
 *
 * <p>Reads per wake-up: a channel reads again while each read fills its buffer, up to
 * {@link #MAX_READS_PER_WAKEUP} buffers, as with Netty's own allocator.
 */
public final class LoopReceiveBuffers implements RecvByteBufAllocator {

    /**
     * Netty's default for a stream channel. Netty sets it only on the allocator a channel is created
     * with; an allocator passed as an option keeps its own default, which for the adaptive one is a
     * single read. With that, a 1 MiB message took 16 passes through the event loop, each with its
     * own {@code epoll_wait}, where one pass reads it all.
     */
    static final int MAX_READS_PER_WAKEUP = 16;

    private static final FastThreadLocal<ByteBuf> KEPT = new FastThreadLocal<>() {
        @Override
        protected void onRemoval(ByteBuf kept) {
            if (kept != null) {
                kept.release();
            }
        }
    };

    private final AdaptiveRecvByteBufAllocator sizes = new AdaptiveRecvByteBufAllocator();

    public LoopReceiveBuffers() {
        sizes.maxMessagesPerRead(MAX_READS_PER_WAKEUP);
    }

    @Override
    @SuppressWarnings("deprecation") // Netty 4.2 deprecates Handle for ExtendedHandle, but this signature is its own
    public Handle newHandle() {
        return new Lending((ExtendedHandle) sizes.newHandle());
    }

    /** Lends the loop's buffer; everything else (sizing, when to stop reading) is the adaptive handle's. */
    private static final class Lending extends DelegatingHandle implements ExtendedHandle {

        private final ExtendedHandle sizes;

        Lending(ExtendedHandle sizes) {
            super(sizes);
            this.sizes = sizes;
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            int size = guess();
            ByteBuf kept = KEPT.getIfExists();
            if (kept != null && kept.refCnt() == 1 && kept.capacity() >= size) {
                return kept.clear().retain();
            }
            ByteBuf fresh = alloc.ioBuffer(size);
            KEPT.set(fresh.retain());
            if (kept != null) {
                kept.release();
            }
            return fresh;
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return sizes.continueReading(maybeMoreDataSupplier);
        }
    }
}
