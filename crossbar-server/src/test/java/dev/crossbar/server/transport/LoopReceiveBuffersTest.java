package dev.crossbar.server.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The loop's receive buffer is lent again only when nothing else holds it, and is released when the
 * loop's thread ends. Each case runs on a thread of its own, as an event loop would, so cases do not
 * share a buffer.
 */
@SuppressWarnings("deprecation") // Netty 4.2 deprecates Handle, yet newHandle() still returns one
class LoopReceiveBuffersTest {

    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    /** Runs {@code body} on a fresh Netty thread (whose thread locals are removed when it ends), rethrowing its failure. */
    private static void onLoopThread(ThrowingRunnable body) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new FastThreadLocalThread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.start();
        t.join(10_000);
        assertFalse(t.isAlive(), "the case finished within 10 s");
        if (failure.get() instanceof Exception e) {
            throw e;
        } else if (failure.get() instanceof Error e) {
            throw e;
        }
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static RecvByteBufAllocator.Handle handle() {
        return new LoopReceiveBuffers().newHandle();
    }

    @Test
    void aBufferItsReaderReleasedIsLentAgainEmpty() throws Exception {
        onLoopThread(() -> {
            RecvByteBufAllocator.Handle reads = handle();
            ByteBuf first = reads.allocate(ALLOC);
            first.writeBytes("hello".getBytes(StandardCharsets.US_ASCII));
            first.readByte();
            first.release(); // as the pipeline does once it has decoded everything
            ByteBuf second = reads.allocate(ALLOC);
            assertSame(first, second, "the same buffer, lent again");
            assertEquals(0, second.readerIndex());
            assertEquals(0, second.writerIndex());
            assertEquals(2, second.refCnt(), "the loop's reference and the reader's");
            second.release();
        });
    }

    @Test
    void aBufferStillHeldIsNotLentAgainAndKeepsItsBytes() throws Exception {
        onLoopThread(() -> {
            RecvByteBufAllocator.Handle reads = handle();
            ByteBuf partial = reads.allocate(ALLOC);
            partial.writeBytes("half a frame".getBytes(StandardCharsets.US_ASCII)); // a decoder keeps it
            ByteBuf next = reads.allocate(ALLOC);
            assertNotSame(partial, next, "a held buffer is not lent");
            next.writeBytes("another connection's read".getBytes(StandardCharsets.US_ASCII));
            assertEquals("half a frame", partial.toString(StandardCharsets.US_ASCII), "its bytes untouched");
            assertEquals(1, partial.refCnt(), "the loop let go of it: its holder frees it");
            partial.release();
            next.release();
            ByteBuf again = reads.allocate(ALLOC);
            assertSame(next, again, "the fresh one is the loop's now");
            again.release();
        });
    }

    @Test
    void connectionsOnOneLoopShareItsBuffer() throws Exception {
        onLoopThread(() -> {
            RecvByteBufAllocator.Handle one = handle();
            RecvByteBufAllocator.Handle other = handle();
            ByteBuf a = one.allocate(ALLOC);
            a.release();
            ByteBuf b = other.allocate(ALLOC);
            assertSame(a, b, "one buffer per loop, not per connection");
            b.release();
        });
    }

    @Test
    void aLargerGuessTakesALargerBuffer() throws Exception {
        onLoopThread(() -> {
            RecvByteBufAllocator.Handle reads = handle();
            ByteBuf small = reads.allocate(ALLOC);
            int guess = reads.guess();
            assertTrue(small.capacity() >= guess, "room for the guess");
            // Full reads make the adaptive handle guess more.
            for (int i = 0; i < 8; i++) {
                reads.reset(null);
                reads.attemptedBytesRead(reads.guess());
                reads.lastBytesRead(reads.guess());
                reads.readComplete();
            }
            assertTrue(reads.guess() > guess, "the guess grew: " + reads.guess());
            small.release();
            ByteBuf larger = reads.allocate(ALLOC);
            assertTrue(larger.capacity() >= reads.guess(), larger.capacity() + " >= " + reads.guess());
            larger.release();
        });
    }

    /** Reads that fill the buffer go on in the same wake-up, up to the limit; a short read ends it. */
    @Test
    void fullReadsGoOnUpToTheLimitAndAShortOneStops() throws Exception {
        EmbeddedChannel channel = new EmbeddedChannel(); // its config: auto-read on, as the relay's channels
        try {
            onLoopThread(() -> {
                RecvByteBufAllocator.ExtendedHandle reads = (RecvByteBufAllocator.ExtendedHandle) handle();
                reads.reset(channel.config());
                int full = 0;
                boolean more = true;
                while (more && full < 100) {
                    reads.attemptedBytesRead(reads.guess());
                    reads.lastBytesRead(reads.guess());
                    reads.incMessagesRead(1);
                    full++;
                    more = reads.continueReading(() -> reads.lastBytesRead() == reads.attemptedBytesRead());
                }
                assertEquals(LoopReceiveBuffers.MAX_READS_PER_WAKEUP, full, "full reads in one wake-up");

                reads.reset(channel.config());
                reads.attemptedBytesRead(reads.guess());
                reads.lastBytesRead(reads.guess() / 2);
                reads.incMessagesRead(1);
                assertFalse(reads.continueReading(() -> reads.lastBytesRead() == reads.attemptedBytesRead()),
                        "a short read drained the socket");
            });
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void theLoopsReferenceIsReleasedWhenItsThreadEnds() throws Exception {
        AtomicReference<ByteBuf> kept = new AtomicReference<>();
        onLoopThread(() -> {
            ByteBuf b = handle().allocate(ALLOC);
            b.release();
            kept.set(b);
            assertEquals(1, b.refCnt(), "held by the loop while it runs");
        });
        assertEquals(0, kept.get().refCnt(), "freed with the thread");
    }
}
