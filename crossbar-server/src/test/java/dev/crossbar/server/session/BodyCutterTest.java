package dev.crossbar.server.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link BodyCutter} on its own: where an MPEG-TS body is cut (whole packets, at the bound and at
 * the end of each read, the tail at the end), how a body is told to be MPEG-TS or not, and that
 * every buffer it makes is handed out or released (the build fails on a leak report).
 */
class BodyCutterTest {

    private static final int P = BodyCutter.TS_PACKET;

    /** Messages handed out, copied and released at once, as the router would take them. */
    private final List<byte[]> out = new ArrayList<>();

    private void take(ByteBuf message) {
        try {
            out.add(ByteBufUtil.getBytes(message));
        } finally {
            message.release();
        }
    }

    private static byte[] ts(int packets) {
        byte[] b = new byte[packets * P];
        new SplittableRandom(packets).nextBytes(b);
        for (int i = 0; i < packets; i++) {
            b[i * P] = 0x47;
        }
        return b;
    }

    /** Feeds {@code body} in reads of {@code read} bytes, each read in decoder pieces of {@code piece}. */
    private void feed(BodyCutter cutter, byte[] body, int read, int piece) {
        for (int r = 0; r < body.length; r += read) {
            int readEnd = Math.min(body.length, r + read);
            for (int p = r; p < readEnd; p += piece) {
                ByteBuf b = Unpooled.wrappedBuffer(body, p, Math.min(piece, readEnd - p));
                cutter.add(b, this::take);
                b.release();
            }
            cutter.readComplete(this::take);
        }
        cutter.end(this::take);
    }

    private byte[] all() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        out.forEach(b::writeBytes);
        return b.toByteArray();
    }

    @Test
    void mpegTsIsCutIntoWholePacketsAtTheBoundAndAtEachReadsEnd() {
        byte[] body = ts(200);
        byte[] withTail = java.util.Arrays.copyOf(body, body.length + 50); // a stream cut short
        BodyCutter cutter = new BodyCutter(PooledByteBufAllocator.DEFAULT, true, 4096, 1 << 20);
        feed(cutter, withTail, 5000, 1000);
        assertArrayEquals(withTail, all(), "every byte, in order");
        int bound = 4096 / P * P;
        for (int i = 0; i < out.size() - 1; i++) {
            assertEquals(0, out.get(i).length % P, "message " + i + ": whole packets");
            assertTrue(out.get(i).length <= bound, "message " + i + ": " + out.get(i).length);
            assertEquals(0x47, out.get(i)[0]);
        }
        assertEquals(50, out.get(out.size() - 1).length % P, "the tail goes out at the end");
        assertEquals(0, cutter.pendingBytes());
    }

    @Test
    void aBodyIsToldMpegTsByFiveSyncBytesWithoutBeingDeclared() {
        BodyCutter cutter = new BodyCutter(PooledByteBufAllocator.DEFAULT, false, 16 * 1024, 1 << 20);
        ByteBuf first = Unpooled.wrappedBuffer(ts(4)); // four packets: not enough to tell
        cutter.add(first, this::take);
        first.release();
        cutter.readComplete(this::take);
        assertEquals(BodyCutter.Kind.UNKNOWN, cutter.kind());
        assertEquals(0, out.size(), "held until it can be told");
        ByteBuf more = Unpooled.wrappedBuffer(ts(3));
        cutter.add(more, this::take);
        more.release();
        cutter.readComplete(this::take);
        assertEquals(BodyCutter.Kind.MPEG_TS, cutter.kind());
        assertEquals(7 * P, all().length);
        cutter.release();
    }

    @Test
    void otherBodiesGoOutPieceByPieceAtTheLimit() {
        byte[] body = new byte[10_000];
        new SplittableRandom(1).nextBytes(body);
        body[0] = '{';
        BodyCutter cutter = new BodyCutter(PooledByteBufAllocator.DEFAULT, false, 16 * 1024, 3000);
        feed(cutter, body, 10_000, 8192);
        assertEquals(BodyCutter.Kind.BYTES, cutter.kind());
        assertArrayEquals(body, all());
        assertEquals(List.of(3000, 3000, 2192, 1808), out.stream().map(m -> m.length).toList(),
                "each piece as received, cut at the limit");
    }

    @Test
    void aShortBodyStartingWithTheSyncByteGoesOutWhole() {
        byte[] body = {0x47, 1, 2, 3};
        BodyCutter cutter = new BodyCutter(PooledByteBufAllocator.DEFAULT, false, 16 * 1024, 1 << 20);
        feed(cutter, body, 4, 4);
        assertEquals(BodyCutter.Kind.BYTES, cutter.kind());
        assertEquals(1, out.size());
        assertArrayEquals(body, out.get(0));
    }

    @Test
    void whatIsHeldWhenThePosterGoesAwayIsReleased() {
        BodyCutter cutter = new BodyCutter(PooledByteBufAllocator.DEFAULT, true, 16 * 1024, 1 << 20);
        ByteBuf partial = Unpooled.wrappedBuffer(ts(3), 0, 2 * P + 100);
        cutter.add(partial, this::take);
        partial.release();
        cutter.readComplete(this::take);
        assertEquals(100, cutter.pendingBytes());
        cutter.release();
        assertEquals(0, cutter.pendingBytes());
    }
}
