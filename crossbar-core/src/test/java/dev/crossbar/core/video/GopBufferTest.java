package dev.crossbar.core.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.video.TsFixture.Chunking;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The GOP buffer fed by the tracker with real ffmpeg output in camera chunkings: after every message
 * its replay is exactly the stream from the latest keyframe's packet to that message's end; it holds
 * nothing before the first keyframe or past its bound; it owns only what it retained.
 */
class GopBufferTest {

    static Stream<Arguments> fixturesAndChunkings() {
        List<Arguments> out = new ArrayList<>();
        for (String name : List.of(TsFixture.MPEG1_G60, TsFixture.H264_G30)) {
            for (Chunking c : TsFixture.cameraChunkings()) {
                out.add(Arguments.of(name, c));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} in messages of {1}")
    @MethodSource("fixturesAndChunkings")
    void replayIsTheStreamFromTheLatestKeyframePacket(String name, Chunking chunking) {
        byte[] ts = TsFixture.bytes(name);
        List<Long> keyframes = TsFixture.keyframes(name);
        RandomAccessTracker tracker = new RandomAccessTracker();
        GopBuffer gop = new GopBuffer(GopBuffer.DEFAULT_MAX_BYTES);
        int at = 0;
        int messagesSinceKeyframe = 0;
        int carried = 0;
        try {
            List<Integer> lengths = chunking.lengths(ts.length);
            for (int i = 0; i < lengths.size(); i++) {
                int n = lengths.get(i);
                int nextLength = i + 1 < lengths.size() ? lengths.get(i + 1) : 0;
                ByteBuf msg = message(ts, at, n);
                int offset = tracker.feed(msg);
                if (offset < 0 && offset != RandomAccessTracker.NONE) {
                    carried++;
                }
                gop.add(msg, offset);
                msg.release(); // the caller's reference: the buffer holds its own
                at += n;
                messagesSinceKeyframe = offset != RandomAccessTracker.NONE ? 1 : messagesSinceKeyframe + 1;

                long latest = latestBefore(keyframes, at);
                if (latest < 0) {
                    assertEquals(0, gop.messages(), "nothing held before the first keyframe");
                    assertEquals(0, gop.bytes());
                    continue;
                }
                assertEquals(at - latest, gop.bytes(), "bytes since the keyframe at " + latest);
                assertEquals(messagesSinceKeyframe, gop.messages());
                if (!replayChecked(messagesSinceKeyframe, latest, keyframes, at, nextLength)) {
                    continue;
                }
                byte[] replayed = replayBytes(gop);
                assertTrue(TsFixture.isRandomAccessPacket(replayed, 0), "replay starts with the keyframe packet");
                assertArrayEquals(Arrays.copyOfRange(ts, (int) latest, at), replayed);
            }
            assertEquals(keyframes.size(), gop.groups());
            assertEquals(0, gop.overflows());
            if (chunking.name().equals("100")) {
                assertTrue(carried > 0, "100-byte messages split keyframe packets: the carried path ran");
            }
        } finally {
            gop.release();
        }
        assertEquals(0, gop.messages());
    }

    @Test
    void overTheBoundItHoldsNothingUntilTheNextKeyframe() {
        byte[] ts = TsFixture.bytes(TsFixture.MPEG1_G60);
        List<Long> keyframes = TsFixture.keyframes(TsFixture.MPEG1_G60);
        int bound = 20_000; // a 2 s group here is about 65 KB
        RandomAccessTracker tracker = new RandomAccessTracker();
        GopBuffer gop = new GopBuffer(bound);
        int at = 0;
        try {
            for (int n : TsFixture.chunks(ts.length, () -> 4096)) {
                ByteBuf msg = message(ts, at, n);
                gop.add(msg, tracker.feed(msg));
                msg.release();
                at += n;
                long latest = latestBefore(keyframes, at);
                assertTrue(gop.bytes() <= bound);
                if (latest >= 0 && at - latest <= bound) {
                    assertArrayEquals(Arrays.copyOfRange(ts, (int) latest, at), replayBytes(gop));
                } else {
                    assertEquals(0, gop.messages(), "over the bound or before a keyframe: nothing at " + at);
                    assertEquals(List.of(), gop.replay());
                }
            }
            assertEquals(keyframes.size(), gop.groups());
            assertEquals(keyframes.size(), gop.overflows(), "every group outgrew 20 KB, each counted once");
        } finally {
            gop.release();
        }
    }

    @Test
    void aKeyframeMessageLargerThanTheBoundIsNotHeld() {
        byte[] ts = TsFixture.bytes(TsFixture.MPEG1_G60);
        GopBuffer gop = new GopBuffer(1000);
        ByteBuf msg = message(ts, 0, 4096);
        try {
            gop.add(msg, 564);
            assertEquals(0, gop.messages());
            assertEquals(1, gop.overflows());
        } finally {
            msg.release();
            gop.release();
        }
    }

    @Test
    void ownsOnlyItsOwnReferencesAndLeavesTheMessageAsItWas() {
        byte[] ts = TsFixture.bytes(TsFixture.MPEG1_G60);
        GopBuffer gop = new GopBuffer(GopBuffer.DEFAULT_MAX_BYTES);
        ByteBuf first = message(ts, 0, 4096);
        ByteBuf second = message(ts, 4096, 4096);
        try {
            gop.add(first, 564);
            gop.add(second, RandomAccessTracker.NONE);
            assertEquals(0, first.readerIndex());
            assertEquals(4096, first.writerIndex());
            assertEquals(2, first.refCnt(), "the caller's reference and the buffer's slice");
            List<ByteBuf> replay = gop.replay();
            assertEquals(2, replay.size());
            assertEquals(4096 - 564, replay.get(0).readableBytes());
            replay.forEach(ByteBuf::release);
            gop.release();
            assertEquals(1, first.refCnt());
            assertEquals(1, second.refCnt());
            assertEquals(0, gop.bytes());
        } finally {
            first.release();
            second.release();
        }
    }

    @Test
    void ageCountsFromTheGroupsFirstMessage() {
        byte[] ts = TsFixture.bytes(TsFixture.MPEG1_G60);
        AtomicLong now = new AtomicLong(1_000);
        GopBuffer gop = new GopBuffer(GopBuffer.DEFAULT_MAX_BYTES, now::get);
        ByteBuf a = message(ts, 0, 4096);
        ByteBuf b = message(ts, 4096, 4096);
        try {
            assertEquals(0, gop.ageNanos(5_000), "nothing held, no age");
            gop.add(a, 564);
            now.set(2_000);
            gop.add(b, RandomAccessTracker.NONE);
            assertEquals(4_000, gop.ageNanos(5_000));
        } finally {
            a.release();
            b.release();
            gop.release();
        }
    }

    @Test
    void rejectsAnOffsetOutsideWhatItWasGiven() {
        GopBuffer gop = new GopBuffer(GopBuffer.DEFAULT_MAX_BYTES);
        ByteBuf msg = PooledByteBufAllocator.DEFAULT.buffer(376).writeZero(376);
        try {
            assertThrows(IllegalArgumentException.class, () -> gop.add(msg, 376));
            assertThrows(IllegalArgumentException.class, () -> gop.add(msg, -1), "no earlier bytes given");
            assertThrows(IllegalArgumentException.class, () -> new GopBuffer(0));
            assertEquals(0, gop.messages());
        } finally {
            msg.release();
            gop.release();
        }
    }

    /**
     * Whether to compare the whole replay after this message: each group's first two messages, the
     * last message before the one that completes the next keyframe's packet, and every 500th
     * (replaying after every message takes minutes with paranoid leak tracking on tiny messages).
     */
    private static boolean replayChecked(int messagesSinceKeyframe, long latest, List<Long> keyframes, int at,
            int nextLength) {
        long next = keyframes.stream().filter(k -> k > latest).findFirst().orElse((long) Integer.MAX_VALUE);
        return messagesSinceKeyframe <= 2 || messagesSinceKeyframe % 500 == 0 || at + nextLength >= next + TsPacket.SIZE;
    }

    /** The keyframe the buffer should start from once {@code end} bytes were given, or -1. */
    private static long latestBefore(List<Long> keyframes, int end) {
        long latest = -1;
        if (end < RandomAccessTracker.DETECTION_BYTES) {
            return latest; // the tracker judges nothing before it knows the stream is MPEG-TS
        }
        for (long k : keyframes) {
            // A keyframe counts once its whole packet has been given.
            if (k + TsPacket.SIZE <= end) {
                latest = k;
            }
        }
        return latest;
    }

    private static ByteBuf message(byte[] ts, int from, int length) {
        return PooledByteBufAllocator.DEFAULT.directBuffer(length).writeBytes(ts, from, length);
    }

    private static byte[] replayBytes(GopBuffer gop) {
        List<ByteBuf> replay = gop.replay();
        int total = replay.stream().mapToInt(ByteBuf::readableBytes).sum();
        byte[] out = new byte[total];
        int at = 0;
        for (ByteBuf b : replay) {
            int n = b.readableBytes();
            b.getBytes(b.readerIndex(), out, at, n);
            at += n;
            b.release();
        }
        return out;
    }
}
