package dev.crossbar.core.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.RouteParser;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Messages queued for one loop back to back, for the same receivers, are written as runs: one
 * buffer holding their frames in order, no larger than {@link FrameRun#MAX_BYTES}; a message too
 * large to copy, or for other receivers, or from another sender, ends a run. A receiver that takes
 * messages one by one gets the same frames in the same order, and every frame is released.
 */
class LoopQueueRunTest {

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private final EventExecutor loop = new DefaultEventExecutor();
    private final Route route = new RouteParser().parse("/runs");

    @AfterEach
    void stop() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }

    private RecordingMember takingRuns() {
        RecordingMember m = new RecordingMember(loop, route);
        m.takesRuns = true;
        return m;
    }

    /** A stream's members as a topic groups them: its sender among them, and four receivers taking runs. */
    private record Stream(RecordingMember sender, RecordingMember[] others, Member[] members) {
    }

    private Stream senderAndFourReceivers() {
        RecordingMember sender = takingRuns();
        RecordingMember[] others = {takingRuns(), takingRuns(), takingRuns(), takingRuns()};
        return new Stream(sender, others, new Member[] {sender, others[0], others[1], others[2], others[3]});
    }

    private PreparedFrame frame(int i, int length) {
        byte[] bytes = new byte[length];
        for (int k = 0; k < length; k++) {
            bytes[k] = (byte) (i * 31 + k);
        }
        // One write: under paranoid leak detection every buffer access records where it came from.
        ByteBuf payload = alloc.directBuffer(length).writeBytes(bytes);
        return PreparedFrame.of(alloc, i % 2 == 0, payload, System.nanoTime());
    }

    @Test
    void aBacklogForTheSameReceiversIsWrittenAsRunsInOrder() throws Exception {
        RecordingMember[] group = new RecordingMember[5];
        for (int i = 0; i < group.length; i++) {
            group[i] = takingRuns();
        }
        RecordingMember oneByOne = new RecordingMember(loop, route);
        Member[] receivers = {group[0], group[1], group[2], group[3], group[4], oneByOne};
        RecordingMember other = takingRuns();
        Member[] otherReceivers = {other, takingRuns(), takingRuns(), takingRuns()};
        LoopQueue queue = new LoopQueue(loop, Long.MAX_VALUE);

        // Hold the loop so that everything below is queued before the first drain.
        CountDownLatch hold = HeldLoop.hold(loop);
        List<PreparedFrame> frames = new ArrayList<>();
        List<byte[]> expected = new ArrayList<>();
        List<byte[]> expectedOther = new ArrayList<>();
        int[] lengths = {2_000, 4_600, 4_600, 0, 5, 4_600, 70_000, 4_600, 4_600, 3_000};
        for (int i = 0; i < 60; i++) {
            PreparedFrame f = frame(i, lengths[i % lengths.length]);
            frames.add(f);
            // Every 25th message goes to another group: it ends the run before it.
            boolean toOther = i % 25 == 24;
            assertTrue(queue.offer(f, toOther ? otherReceivers : receivers, null));
            (toOther ? expectedOther : expected).add(ByteBufUtil.getBytes(f.content()));
        }
        for (PreparedFrame f : frames) {
            f.release(); // the queue holds its own reference until the frame is written
        }
        hold.countDown();
        loop.submit(() -> { }).get(10, TimeUnit.SECONDS);
        loop.submit(() -> { }).get(10, TimeUnit.SECONDS);

        for (RecordingMember m : group) {
            assertEquals(List.of(), m.runFaults);
            assertEquals(0, m.wrongThread.get());
            assertSameFrames(expected, m.received);
            assertTrue(m.runLengths.size() >= 2, "runs written: " + m.runLengths);
            assertTrue(m.runLengths.stream().allMatch(n -> n <= FrameRun.MAX_BYTES), "run too long: " + m.runLengths);
        }
        assertSameFrames(expected, oneByOne.received);
        assertEquals(0, oneByOne.wrongThread.get());
        assertSameFrames(expectedOther, other.received);
        for (PreparedFrame f : frames) {
            assertEquals(0, f.refCnt(), "a frame still referenced after its drain");
        }
        assertEquals(0, queue.backlogBytes());
    }

    @Test
    void theSendersOwnMessagesDoNotComeBackInARun() throws Exception {
        Stream stream = senderAndFourReceivers();
        RecordingMember sender = stream.sender();
        RecordingMember[] others = stream.others();
        Member[] receivers = stream.members();
        LoopQueue queue = new LoopQueue(loop, Long.MAX_VALUE);
        CountDownLatch hold = HeldLoop.hold(loop);
        List<byte[]> expected = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            PreparedFrame f = frame(i, 4_600);
            queue.offer(f, receivers, sender);
            expected.add(ByteBufUtil.getBytes(f.content()));
            f.release();
        }
        hold.countDown();
        loop.submit(() -> { }).get(10, TimeUnit.SECONDS);

        assertEquals(List.of(), sender.received, "echoed to its sender");
        for (RecordingMember m : others) {
            assertSameFrames(expected, m.received);
            assertEquals(List.of(8 * (4_600 + 4)), m.runLengths, "one run of all eight frames");
        }
    }

    @Test
    void messagesReadOnTheReceiversOwnLoopGoToThemAsOneRunAtTheBatchEnd() throws Exception {
        Stream stream = senderAndFourReceivers();
        RecordingMember sender = stream.sender();
        RecordingMember[] others = stream.others();
        Member[] receivers = stream.members();
        LoopQueue queue = new LoopQueue(loop, Long.MAX_VALUE);
        List<byte[]> expected = new ArrayList<>();
        // One task stands for one read on the loop: eight messages, then the loop ends its batch.
        int writtenDuringTheRead = loop.submit(() -> {
            for (int i = 0; i < 8; i++) {
                PreparedFrame f = frame(i, 4_600);
                assertTrue(queue.deliverHere(f, receivers, sender));
                expected.add(ByteBufUtil.getBytes(f.content()));
                f.release(); // the queue holds its own reference until the batch's end
            }
            return others[0].received.size();
        }).get(10, TimeUnit.SECONDS);
        loop.submit(() -> { }).get(10, TimeUnit.SECONDS);

        assertEquals(0, writtenDuringTheRead, "written before the batch ended");
        assertEquals(List.of(), sender.received, "echoed to its sender");
        for (RecordingMember m : others) {
            assertSameFrames(expected, m.received);
            assertEquals(List.of(8 * (4_600 + 4)), m.runLengths, "one run of all eight frames");
            assertEquals(1, m.flushes.get(), "one flush for the batch");
            assertEquals(0, m.wrongThread.get());
        }
        assertEquals(0, queue.backlogBytes());
    }

    @Test
    void aFewReceiversHereStillGetTheirMessagesAfterWhatIsQueuedForThem() throws Exception {
        RecordingMember sender = takingRuns();
        RecordingMember stays = takingRuns();
        Member[] many = {sender, stays, takingRuns(), takingRuns(), takingRuns()};
        Member[] few = {sender, stays}; // the same stream after three receivers left
        LoopQueue queue = new LoopQueue(loop, Long.MAX_VALUE);
        List<byte[]> expected = new ArrayList<>();
        loop.submit(() -> {
            for (int i = 0; i < 6; i++) {
                PreparedFrame f = frame(i, 4_600);
                assertTrue(queue.deliverHere(f, i < 3 ? many : few, sender));
                expected.add(ByteBufUtil.getBytes(f.content()));
                f.release();
            }
        }).get(10, TimeUnit.SECONDS);
        loop.submit(() -> { }).get(10, TimeUnit.SECONDS);

        assertSameFrames(expected, stays.received);
        assertEquals(1, stays.flushes.get(), "one flush for the batch");
    }

    private static void assertSameFrames(List<byte[]> expected, List<byte[]> actual) {
        assertEquals(expected.size(), actual.size(), "frames received");
        for (int i = 0; i < expected.size(); i++) {
            if (!Arrays.equals(expected.get(i), actual.get(i))) {
                throw new AssertionError("frame " + i + " merged, split, corrupted or out of order");
            }
        }
    }
}
