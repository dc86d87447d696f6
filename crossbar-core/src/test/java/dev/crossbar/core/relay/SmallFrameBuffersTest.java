package dev.crossbar.core.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.RouteParser;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A small frame's buffer is read into again by its loop's next small message only once nothing
 * else holds it: a receiver on another loop that has not yet written the first message gets it
 * intact, and every buffer is released, kept ones when their loop ends.
 */
class SmallFrameBuffersTest {

    private final ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
    private final EventExecutor loop = new DefaultEventExecutor();
    private final EventExecutor otherLoop = new DefaultEventExecutor();
    private final Route route = new RouteParser().parse("/small");

    @AfterEach
    void stop() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        otherLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }

    private <T> T onLoop(Callable<T> task) throws Exception {
        return loop.submit(task).get(10, TimeUnit.SECONDS);
    }

    @Test
    void aBufferNothingElseHoldsIsTakenAgainEmptyAndAHeldOneIsNot() throws Exception {
        ByteBuf first = onLoop(() -> {
            ByteBuf b = SmallFrameBuffers.take(alloc, 70).writeZero(70);
            SmallFrameBuffers.keepOrRelease(b);
            return b;
        });
        ByteBuf again = onLoop(() -> SmallFrameBuffers.take(alloc, 70));
        assertSame(first, again, "the kept buffer");
        assertEquals(1, again.refCnt());
        assertEquals(0, again.readableBytes(), "taken empty");

        // Held by someone else (a receiver on another loop): released by the loop, freed by its holder.
        ByteBuf held = again.writeZero(70).retainedDuplicate();
        onLoop(() -> {
            SmallFrameBuffers.keepOrRelease(again);
            return null;
        });
        ByteBuf next = onLoop(() -> SmallFrameBuffers.take(alloc, 70));
        assertNotSame(again, next, "a buffer still held is not taken again");
        assertEquals(1, held.refCnt());
        held.release();
        assertEquals(0, again.refCnt());
        next.release();
    }

    @Test
    void aLargerFrameGetsANewBufferAndTheKeptOneIsFreed() throws Exception {
        ByteBuf small = onLoop(() -> {
            ByteBuf b = SmallFrameBuffers.take(alloc, 10);
            SmallFrameBuffers.keepOrRelease(b);
            return b;
        });
        ByteBuf larger = onLoop(() -> SmallFrameBuffers.take(alloc, SmallFrameBuffers.MAX_BYTES));
        assertNotSame(small, larger);
        assertEquals(0, small.refCnt(), "the kept buffer, too small, was freed");
        assertTrue(larger.capacity() >= SmallFrameBuffers.MAX_BYTES);
        larger.release();
    }

    @Test
    void onlyEventLoopsKeepBuffersAndALoopReleasesItsOwnWhenItEnds() throws Exception {
        // This test's thread does not clean its thread-locals up when it ends: it keeps nothing.
        ByteBuf here = SmallFrameBuffers.take(alloc, 70);
        SmallFrameBuffers.keepOrRelease(here);
        assertEquals(0, here.refCnt());
        // Nor does a loop keep a buffer of another kind (one that might be shared, or larger).
        ByteBuf other = onLoop(() -> {
            ByteBuf b = alloc.directBuffer(70);
            SmallFrameBuffers.keepOrRelease(b);
            return b;
        });
        assertEquals(0, other.refCnt());

        ByteBuf kept = onLoop(() -> {
            ByteBuf b = SmallFrameBuffers.take(alloc, 70);
            SmallFrameBuffers.keepOrRelease(b);
            return b;
        });
        assertEquals(1, kept.refCnt());
        assertTrue(loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS));
        assertEquals(0, kept.refCnt(), "released when its loop ended");
    }

    @Test
    void aMessageAReceiverOnAnotherLoopHasNotWrittenYetIsNotOverwrittenByTheNext() throws Exception {
        RecordingMember sender = new RecordingMember(loop, route);
        RecordingMember here = new RecordingMember(loop, route);
        RecordingMember there = new RecordingMember(otherLoop, route);
        FanOut fanOut = new FanOut(Long.MAX_VALUE);
        LoopGroup[] bothLoops = {new LoopGroup(loop, new Member[] {sender, here}),
                new LoopGroup(otherLoop, new Member[] {there})};
        LoopGroup[] thisLoop = {new LoopGroup(loop, new Member[] {sender, here})};

        // The other loop is held, so that both messages are sent before it writes the first.
        CountDownLatch hold = HeldLoop.hold(otherLoop);
        byte[] one = pattern(1, 70);
        byte[] two = pattern(2, 70);
        onLoop(() -> {
            fanOut.send(bothLoops, sender, false, alloc.directBuffer(70).writeBytes(one), alloc, System.nanoTime());
            fanOut.send(bothLoops, sender, false, alloc.directBuffer(70).writeBytes(two), alloc, System.nanoTime());
            return null;
        });
        hold.countDown();
        settle();
        assertPayloads(List.of(one, two), there.received);
        assertPayloads(List.of(one, two), here.received);
        assertNotSame(here.contents.get(0), here.contents.get(1), "a buffer another loop held was read into again");

        // With every receiver on the sender's loop, each copies the frame at once: the next message is read into it.
        onLoop(() -> {
            fanOut.send(thisLoop, sender, false, alloc.directBuffer(70).writeBytes(one), alloc, System.nanoTime());
            fanOut.send(thisLoop, sender, false, alloc.directBuffer(70).writeBytes(two), alloc, System.nanoTime());
            return null;
        });
        settle();
        assertPayloads(List.of(one, two, one, two), here.received);
        assertSame(here.contents.get(2), here.contents.get(3), "the second message had a buffer of its own");
        assertEquals(List.of(), sender.received, "echoed to its sender");
    }

    /**
     * Until what the sends left queued has run: the sender's loop ends its batch in a task of its
     * own (which hands the other loop its share), and the other loop then drains and flushes. Tasks
     * run in order on each loop, so a no-op behind them on each, sender's loop first, is enough.
     */
    private void settle() throws Exception {
        loop.submit(() -> { }).get(10, TimeUnit.SECONDS);
        otherLoop.submit(() -> { }).get(10, TimeUnit.SECONDS);
        otherLoop.submit(() -> { }).get(10, TimeUnit.SECONDS);
        loop.submit(() -> { }).get(10, TimeUnit.SECONDS);
    }

    private static byte[] pattern(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (seed * 31 + i);
        }
        return bytes;
    }

    /** Each frame is a 2-byte header (payloads under 126 bytes) and the payload. */
    private static void assertPayloads(List<byte[]> expected, List<byte[]> frames) {
        assertEquals(expected.size(), frames.size(), "frames received");
        for (int i = 0; i < expected.size(); i++) {
            byte[] payload = Arrays.copyOfRange(frames.get(i), 2, frames.get(i).length);
            assertTrue(Arrays.equals(expected.get(i), payload), "frame " + i + " is not its message");
        }
    }
}
