package dev.crossbar.core.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.video.RandomAccessTracker.State;
import dev.crossbar.core.video.TsFixture.Chunking;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The tracker on real ffmpeg MPEG-TS output, chunked as cameras send it, against ffprobe's keyframe
 * positions; on streams that are not MPEG-TS; and across lost sync.
 */
class RandomAccessTrackerTest {

    /** Bytes before the reader index of each message: the tracker must read from the reader index. */
    private static final int HEADROOM = 3;

    static Stream<Arguments> fixturesAndChunkings() {
        List<Arguments> out = new ArrayList<>();
        for (String name : List.of(TsFixture.MPEG1_G60, TsFixture.MPEG1_G30, TsFixture.H264_G30)) {
            for (Chunking c : TsFixture.cameraChunkings()) {
                out.add(Arguments.of(name, c));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} in messages of {1}")
    @MethodSource("fixturesAndChunkings")
    void findsExactlyTheKeyframesFfprobeLists(String name, Chunking chunking) {
        byte[] ts = TsFixture.bytes(name);
        RandomAccessTracker tracker = new RandomAccessTracker();
        List<Long> found = feedAll(tracker, ts, chunking.lengths(ts.length));
        assertEquals(TsFixture.keyframes(name), found);
        for (long p : found) {
            assertTrue(p % TsPacket.SIZE == 0 && TsFixture.isRandomAccessPacket(ts, (int) p), "packet at " + p);
        }
        assertEquals(State.MPEG_TS, tracker.state());
        assertEquals(0, tracker.syncLosses());
        assertTrue(tracker.usesRandomAccessIndicator());
        assertEquals(found.size(), tracker.randomAccessPoints());
    }

    @ParameterizedTest(name = "{0} in messages of {1}")
    @MethodSource("fixturesAndChunkings")
    void findsKeyframesByContentWhenTheStreamNeverSetsRandomAccessIndicator(String name, Chunking chunking) {
        byte[] ts = TsFixture.withoutRandomAccessIndicator(TsFixture.bytes(name));
        RandomAccessTracker tracker = new RandomAccessTracker();
        assertEquals(TsFixture.keyframes(name), feedAll(tracker, ts, chunking.lengths(ts.length)));
        assertFalse(tracker.usesRandomAccessIndicator());
    }

    @ParameterizedTest
    @MethodSource("fixtures")
    void ffprobesKeyframesAreExactlyThePacketsThatSetRandomAccessIndicator(String name) {
        // The oracle's premise, checked on the file itself with no tracker code involved.
        byte[] ts = TsFixture.bytes(name);
        List<Long> rai = new ArrayList<>();
        for (int at = 0; at + TsPacket.SIZE <= ts.length; at += TsPacket.SIZE) {
            if (TsFixture.isRandomAccessPacket(ts, at)) {
                rai.add((long) at);
            }
        }
        assertEquals(TsFixture.keyframes(name), rai);
        assertTrue(rai.size() >= 3, "a fixture with several keyframes");
    }

    static Stream<String> fixtures() {
        return Stream.of(TsFixture.MPEG1_G60, TsFixture.MPEG1_G30, TsFixture.H264_G30);
    }

    @Test
    void reportsAPacketThatBeganInEarlierMessagesWithANegativeOffset() {
        byte[] ts = TsFixture.bytes(TsFixture.MPEG1_G60);
        long second = TsFixture.keyframes(TsFixture.MPEG1_G60).get(1);
        // Split the second keyframe's packet 10 bytes in: the message with its sync byte cannot judge it.
        int cut = (int) second + 10;
        RandomAccessTracker tracker = new RandomAccessTracker();
        feed(tracker, ts, 0, cut);
        int offset = feed(tracker, ts, cut, 1000);
        assertEquals(-10, offset);
    }

    @Test
    void aStreamThatIsNotMpegTsIsCalledSoAndNeverCut() {
        RandomAccessTracker json = new RandomAccessTracker();
        for (int i = 0; i < 100; i++) {
            byte[] msg = ("{\"angle\":" + i + ",\"pos\":[1.5,2.25,3],\"G\":\"GGGG\"}").getBytes(StandardCharsets.UTF_8);
            assertEquals(RandomAccessTracker.NONE, feed(json, msg, 0, msg.length));
        }
        assertEquals(State.NOT_MPEG_TS, json.state());

        byte[] noise = new byte[64 * 1024];
        new Random(1).nextBytes(noise);
        RandomAccessTracker random = new RandomAccessTracker();
        assertEquals(List.of(), feedAll(random, noise, TsFixture.chunks(noise.length, () -> 1000)));
        assertEquals(State.NOT_MPEG_TS, random.state());

        // Once judged, real TS afterwards changes nothing: the stream is relayed as it was.
        byte[] ts = TsFixture.bytes(TsFixture.MPEG1_G30);
        assertEquals(List.of(), feedAll(random, ts, TsFixture.chunks(ts.length, () -> 4096)));
        assertEquals(State.NOT_MPEG_TS, random.state());
    }

    @Test
    void staysUnknownUntilItHasSeenEnoughBytes() {
        byte[] ts = TsFixture.bytes(TsFixture.MPEG1_G60);
        RandomAccessTracker tracker = new RandomAccessTracker();
        feed(tracker, ts, 0, RandomAccessTracker.DETECTION_BYTES - 1);
        assertEquals(State.UNKNOWN, tracker.state());
        feed(tracker, ts, RandomAccessTracker.DETECTION_BYTES - 1, 1);
        assertEquals(State.MPEG_TS, tracker.state());
    }

    @Test
    void findsThePhaseOfAStreamJoinedMidPacket() {
        byte[] ts = TsFixture.bytes(TsFixture.MPEG1_G60);
        int skip = 100;
        byte[] late = Arrays.copyOfRange(ts, skip, ts.length);
        RandomAccessTracker tracker = new RandomAccessTracker();
        List<Long> found = feedAll(tracker, late, TsFixture.chunks(late.length, () -> 4096));
        assertEquals(TsFixture.keyframes(TsFixture.MPEG1_G60).stream().map(p -> p - skip).toList(), found);
        assertEquals(0, tracker.syncLosses());
    }

    @Test
    void resyncsAfterGarbageAndFindsTheKeyframesAfterIt() {
        byte[] ts = TsFixture.bytes(TsFixture.MPEG1_G60);
        List<Long> keyframes = TsFixture.keyframes(TsFixture.MPEG1_G60);
        int at = 100 * TsPacket.SIZE; // between the first and second keyframe
        byte[] junk = new byte[50];
        new Random(3).nextBytes(junk);
        junk[0] = 0x12; // not a sync byte, so the packet boundary at `at` fails
        byte[] broken = new byte[ts.length + junk.length];
        System.arraycopy(ts, 0, broken, 0, at);
        System.arraycopy(junk, 0, broken, at, junk.length);
        System.arraycopy(ts, at, broken, at + junk.length, ts.length - at);

        for (Chunking c : TsFixture.cameraChunkings()) {
            RandomAccessTracker tracker = new RandomAccessTracker();
            List<Long> found = feedAll(tracker, broken, c.lengths(broken.length));
            List<Long> expected = keyframes.stream().map(p -> p < at ? p : p + junk.length).toList();
            assertEquals(expected, found, c.name());
            assertEquals(1, tracker.syncLosses(), c.name());
            assertEquals(State.MPEG_TS, tracker.state(), c.name());
        }
    }

    @Test
    void corruptedStreamsNeverThrowAndEveryReportIsASyncByteInReach() {
        // The tracker runs on the publisher's loop: hostile or damaged input must cost nothing worse
        // than missed keyframes. Bytes flipped, dropped and inserted at random, in random messages.
        byte[] clean = TsFixture.bytes(TsFixture.MPEG1_G30);
        Random random = new Random(2026);
        long losses = 0;
        long points = 0;
        for (int round = 0; round < 40; round++) {
            byte[] ts = damage(clean, random);
            RandomAccessTracker tracker = new RandomAccessTracker();
            int at = 0;
            for (int n : TsFixture.chunks(ts.length, () -> 1 + random.nextInt(3000))) {
                int offset = tracker.feed(Unpooled.wrappedBuffer(ts, at, n));
                if (offset != RandomAccessTracker.NONE) {
                    assertTrue(offset < n && (offset >= -RandomAccessTracker.MAX_CARRY || at < RandomAccessTracker.DETECTION_BYTES),
                            "offset " + offset + " of a message of " + n + " at " + at);
                    assertEquals(TsPacket.SYNC, ts[at + offset], "round " + round + ": a packet's first byte");
                }
                at += n;
            }
            losses += tracker.syncLosses();
            points += tracker.randomAccessPoints();
        }
        // The damage did break sync, and keyframes were still found after resyncing.
        assertTrue(losses > 40 && points > 40, losses + " sync losses, " + points + " points");
    }

    private static byte[] damage(byte[] clean, Random random) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(clean.length + 4096);
        for (int i = 0; i < clean.length; i++) {
            int dice = random.nextInt(20_000);
            if (dice == 0) {
                continue; // a byte lost
            } else if (dice == 1) {
                byte[] junk = new byte[1 + random.nextInt(400)];
                random.nextBytes(junk);
                out.writeBytes(junk); // bytes inserted
            }
            out.write(dice == 2 ? random.nextInt(256) : clean[i]); // a byte flipped
        }
        return out.toByteArray();
    }

    /** Feeds {@code ts} in messages of the given lengths; returns the stream positions reported. */
    static List<Long> feedAll(RandomAccessTracker tracker, byte[] ts, List<Integer> lengths) {
        List<Long> found = new ArrayList<>();
        int at = 0;
        for (int n : lengths) {
            int offset = feed(tracker, ts, at, n);
            if (offset != RandomAccessTracker.NONE) {
                assertTrue(offset < n, "offset " + offset + " inside a message of " + n);
                found.add((long) at + offset);
            }
            at += n;
        }
        assertEquals(ts.length, at);
        return found;
    }

    /** Feeds ts[from, from+length) as one pooled direct message, checking feed leaves it untouched. */
    static int feed(RandomAccessTracker tracker, byte[] ts, int from, int length) {
        ByteBuf msg = PooledByteBufAllocator.DEFAULT.directBuffer(HEADROOM + length);
        try {
            msg.writeZero(HEADROOM).writeBytes(ts, from, length).readerIndex(HEADROOM);
            int offset = tracker.feed(msg);
            assertEquals(HEADROOM, msg.readerIndex());
            assertEquals(HEADROOM + length, msg.writerIndex());
            assertEquals(1, msg.refCnt());
            return offset;
        } finally {
            msg.release();
        }
    }
}
