package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class IntegrityCheckerTest {

    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    private final RunClock clock = new RunClock();
    private final LatencyRecorder recorder = new LatencyRecorder(clock, 1_000_000_000L);
    private final Histogram latency = recorder.all();

    private IntegrityChecker checker(MessageFormat f, int senders, SendTimes times) {
        return new IntegrityChecker(f, senders, times, clock, recorder);
    }

    /** Feeds message {@code seq} of {@code sender}, optionally altered, and releases it. */
    private static void feed(IntegrityChecker c, MessageFormat f, int sender, long seq, Consumer<ByteBuf> alter) {
        ByteBuf m = f.encode(ALLOC, sender, seq, System.nanoTime());
        try {
            alter.accept(m);
            c.onMessage(m, System.nanoTime());
        } finally {
            m.release();
        }
    }

    private static void feed(IntegrityChecker c, MessageFormat f, int sender, long seq) {
        feed(c, f, sender, seq, m -> { });
    }

    @Test
    void inOrderMessagesAreDeliveredWithNothingElseCounted() {
        MessageFormat f = new MessageFormat(64);
        IntegrityChecker c = checker(f, 1, null);
        for (int i = 0; i < 100; i++) {
            feed(c, f, 0, i);
        }
        assertEquals(100, c.delivered());
        assertEquals(100, c.unique(0));
        assertEquals(99, c.highestSeq(0));
        assertEquals(100 * 64, c.deliveredBytes());
        assertEquals(0, c.corrupt() + c.reordered() + c.duplicates() + c.mergedFrames());
    }

    @Test
    void lateArrivalIsAReorderAndARepeatIsADuplicate() {
        MessageFormat f = new MessageFormat(64);
        IntegrityChecker c = checker(f, 1, null);
        feed(c, f, 0, 0);
        feed(c, f, 0, 2);
        feed(c, f, 0, 1);
        feed(c, f, 0, 2);
        assertEquals(1, c.reordered());
        assertEquals(1, c.duplicates());
        assertEquals(3, c.unique(0));
        assertEquals(3, c.delivered());
    }

    @Test
    void gapsAreLossCountedAgainstWhatWasSent() {
        MessageFormat f = new MessageFormat(100);
        IntegrityChecker c = checker(f, 1, null);
        feed(c, f, 0, 0);
        feed(c, f, 0, 5);
        long sent = 6;
        assertEquals(4, sent - c.unique(0));
        assertEquals(5, c.highestSeq(0));
    }

    @Test
    void aChangedBodyByteIsCorrupt() {
        MessageFormat f = new MessageFormat(4600);
        IntegrityChecker c = checker(f, 1, null);
        feed(c, f, 0, 0, m -> m.setByte(4000, m.getByte(4000) ^ 1));
        assertEquals(1, c.corrupt());
        assertEquals(0, c.delivered());
        assertEquals(0, c.unique(0));
    }

    @Test
    void aBodyFromAnotherMessageIsCorrupt() {
        MessageFormat f = new MessageFormat(64);
        IntegrityChecker c = checker(f, 1, null);
        // Message 1's header with message 0's body: each variant differs, so the swap shows.
        feed(c, f, 0, 0, m -> m.setLong(MessageFormat.OFF_SEQ, 1));
        assertEquals(1, c.corrupt());
    }

    @Test
    void truncatedOrUnknownMessagesAreCorrupt() {
        MessageFormat f = new MessageFormat(64);
        IntegrityChecker c = checker(f, 2, null);
        feed(c, f, 0, 0, m -> m.writerIndex(63));
        feed(c, f, 5, 0); // no such sender
        feed(c, f, 0, 1, m -> m.setShort(MessageFormat.OFF_MAGIC, 0));
        ByteBuf empty = Unpooled.EMPTY_BUFFER;
        c.onMessage(empty, System.nanoTime());
        assertEquals(4, c.corrupt());
        assertEquals(0, c.delivered());
    }

    @Test
    void wholeMessagesLaidEndToEndAreOneMergedFrame() {
        MessageFormat f = new MessageFormat(64);
        IntegrityChecker c = checker(f, 1, null);
        ByteBuf merged = ALLOC.buffer();
        try {
            for (int i = 0; i < 3; i++) {
                ByteBuf m = f.encode(ALLOC, 0, i, System.nanoTime());
                merged.writeBytes(m);
                m.release();
            }
            c.onMessage(merged, System.nanoTime());
        } finally {
            merged.release();
        }
        assertEquals(1, c.mergedFrames());
        assertEquals(3, c.mergedMessages());
        assertEquals(0, c.delivered(), "a merged frame is not a one-to-one delivery");
        assertEquals(3, c.unique(0), "its messages did arrive, so they are not lost");
        assertEquals(0, c.corrupt());
    }

    @Test
    void aMergedFrameWithABadPartIsCorrupt() {
        MessageFormat f = new MessageFormat(64);
        IntegrityChecker c = checker(f, 1, null);
        ByteBuf merged = ALLOC.buffer();
        try {
            for (int i = 0; i < 2; i++) {
                ByteBuf m = f.encode(ALLOC, 0, i, System.nanoTime());
                merged.writeBytes(m);
                m.release();
            }
            merged.setByte(64 + 40, merged.getByte(64 + 40) ^ 0x55);
            c.onMessage(merged, System.nanoTime());
        } finally {
            merged.release();
        }
        assertEquals(1, c.corrupt());
        assertEquals(0, c.mergedFrames());
    }

    @Test
    void tinyMessagesCarryA24BitSequenceAndTakeSendTimesFromTheSender() {
        MessageFormat f = new MessageFormat(3);
        SendTimes times = new SendTimes();
        clock.start(0, 1_000_000_000L);
        IntegrityChecker c = checker(f, 1, times);
        for (int i = 0; i < 10; i++) {
            times.put(i, System.nanoTime());
            feed(c, f, 0, i);
        }
        assertEquals(10, c.delivered());
        assertEquals(10, latency.getTotalCount());
        // Three tiny messages in one frame: merged, not corrupt.
        ByteBuf merged = ALLOC.buffer();
        try {
            for (int i = 10; i < 13; i++) {
                times.put(i, System.nanoTime());
                ByteBuf m = f.encode(ALLOC, 0, i, 0);
                merged.writeBytes(m);
                m.release();
            }
            c.onMessage(merged, System.nanoTime());
        } finally {
            merged.release();
        }
        assertEquals(1, c.mergedFrames());
        assertEquals(13, c.unique(0));
    }

    @Test
    void sequencesUnwrapAcross24Bits() {
        assertEquals(0, IntegrityChecker.unwrap24(0, -1));
        assertEquals(5, IntegrityChecker.unwrap24(5, 3));
        assertEquals(1 << 24, IntegrityChecker.unwrap24(0, (1 << 24) - 1));
        assertEquals((1 << 24) + 7, IntegrityChecker.unwrap24(7, (1 << 24) - 3));
        assertEquals((1 << 24) - 2, IntegrityChecker.unwrap24(0xFFFFFE, (1 << 24) + 4), "a late one before the wrap");
        assertEquals(-1, IntegrityChecker.unwrap24(0xFFFFFF, -1), "cannot precede the first message");
    }

    @Test
    void latencyCountsOnlyMessagesSentAfterWarmup() {
        MessageFormat f = new MessageFormat(64);
        IntegrityChecker c = checker(f, 1, null);
        ByteBuf early = f.encode(ALLOC, 0, 0, System.nanoTime());
        clock.start(0, 1_000_000_000L);
        ByteBuf late = f.encode(ALLOC, 0, 1, System.nanoTime() + 1);
        try {
            c.onMessage(early, System.nanoTime());
            c.onMessage(late, System.nanoTime());
        } finally {
            early.release();
            late.release();
        }
        assertEquals(2, c.delivered());
        assertEquals(1, latency.getTotalCount());
    }

    @Test
    void tinyMessagesNeedOneSenderAndItsSendTimes() {
        MessageFormat f = new MessageFormat(10);
        assertThrows(IllegalArgumentException.class, () -> checker(f, 2, new SendTimes()));
        assertThrows(IllegalArgumentException.class, () -> checker(f, 1, null));
        assertThrows(IllegalArgumentException.class, () -> new MessageFormat(2));
    }
}
