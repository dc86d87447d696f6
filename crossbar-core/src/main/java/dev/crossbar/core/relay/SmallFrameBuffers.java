package dev.crossbar.core.relay;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.FastThreadLocalThread;

/**
 * Where the buffers of small frames come from: frames of up to {@link SharedFrameBuffers#COPIED_MAX_BYTES},
 * which every receiver copies rather than shares. Such a frame's buffer is usually free again as
 * soon as the fan-out that sent it returns; rather than give it back to the allocator and take
 * another for the next message, the event loop keeps it and reads the next small message into it.
 * In ping-pong, taking a payload buffer from the allocator and giving it back was a fifth of the
 * relay's user-space time (async-profiler; docs/benchmarks/journal.md). A message of the same size
 * as the last then costs no allocation at all.
 *
 * <p>One buffer per thread, kept only on threads that release their {@link FastThreadLocal}s when
 * they end (event loops); elsewhere buffers go back to the allocator as before.
 *
 * <p>Ownership: {@link #take} gives the caller one reference, as a fresh buffer would.
 * {@link #keepOrRelease} takes the caller's reference: the buffer is kept if that reference is its
 * last ({@code refCnt() == 1}, so no receiver, queue or other loop holds it), it is one of these
 * buffers and the thread keeps none yet; otherwise it is released. A kept buffer is released when
 * its thread ends.
 */
final class SmallFrameBuffers {

    /** The largest buffer taken here; also what tells these buffers from others (their maximum capacity). */
    static final int MAX_BYTES = SharedFrameBuffers.COPIED_MAX_BYTES;

    private static final FastThreadLocal<ByteBuf> KEPT = new FastThreadLocal<>() {
        @Override
        protected void onRemoval(ByteBuf kept) {
            if (kept != null) {
                kept.release();
            }
        }
    };

    private SmallFrameBuffers() {
    }

    /**
     * An empty direct buffer with room for {@code frameLength} bytes (at most {@link #MAX_BYTES}):
     * the one this thread kept, if it is large enough, else a new one from {@code alloc}.
     */
    static ByteBuf take(ByteBufAllocator alloc, int frameLength) {
        ByteBuf kept = KEPT.getIfExists();
        if (kept != null) {
            KEPT.set(null);
            if (kept.capacity() >= frameLength) {
                return kept.clear();
            }
            kept.release();
        }
        return alloc.directBuffer(frameLength, MAX_BYTES);
    }

    /** Keeps {@code buf} for this thread's next {@link #take} if nothing else holds it; else releases it. */
    static void keepOrRelease(ByteBuf buf) {
        if (buf.maxCapacity() == MAX_BYTES && buf.refCnt() == 1
                && FastThreadLocalThread.currentThreadWillCleanupFastThreadLocals() && KEPT.getIfExists() == null) {
            KEPT.set(buf);
        } else {
            buf.release();
        }
    }
}
