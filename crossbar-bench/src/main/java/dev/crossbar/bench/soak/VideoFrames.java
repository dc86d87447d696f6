package dev.crossbar.bench.soak;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A camera's messages as MPEG-TS, the way a lab camera sends them: {@value #PACKETS} packets of 188
 * bytes (about 4 KiB, 1 Mbit/s at 30 a second), each beginning a video PES, the first of every
 * {@value #GOP}th message marked as a random-access point ({@code random_access_indicator}), so {@code start=keyframe} starts a late viewer there. The last packet is a null
 * packet (PID 0x1FFF, which decoders skip) carrying the message's {@link Label}; every other byte is
 * a function of the label, so a receiver checks each message whole.
 */
final class VideoFrames {

    static final int PACKET = 188;
    static final int PACKETS = 21;
    static final int GOP = 30;
    private static final int VIDEO_PID = 0x100;
    private static final int NULL_PID = 0x1FFF;
    private static final byte[] PES_HEADER = {0, 0, 1, (byte) 0xE0, 0, 0, (byte) 0x80, 0, 0};

    private VideoFrames() {
    }

    static byte[] frame(Label l) {
        byte[] m = new byte[PACKETS * PACKET];
        for (int p = 0; p < PACKETS - 1; p++) {
            int at = p * PACKET;
            boolean first = p == 0;
            boolean key = first && l.seq() % GOP == 0;
            header(m, at, VIDEO_PID, first, (int) (l.seq() * PACKETS + p));
            int payload = at + 4;
            if (key) {
                m[at + 3] |= 0x20; // adaptation field follows
                m[at + 4] = 1; // its length
                m[at + 5] = 0x40; // random_access_indicator
                payload = at + 6;
            }
            if (first) {
                // A video PES begins here (stream_id 0xE0, no PTS): what tells the relay this is video.
                System.arraycopy(PES_HEADER, 0, m, payload, PES_HEADER.length);
                payload += PES_HEADER.length;
            }
            fill(m, payload, at + PACKET, l.seq() * 31 + p);
        }
        int at = (PACKETS - 1) * PACKET;
        header(m, at, NULL_PID, false, 0);
        ByteBuffer.wrap(m, at + 4, 16).putInt(l.stream()).putInt(l.epoch()).putLong(l.seq());
        fill(m, at + 20, at + PACKET, l.seq());
        return m;
    }

    private static void header(byte[] m, int at, int pid, boolean unitStart, int counter) {
        m[at] = 0x47;
        m[at + 1] = (byte) ((unitStart ? 0x40 : 0) | (pid >> 8));
        m[at + 2] = (byte) pid;
        m[at + 3] = (byte) (0x10 | (counter & 0x0F)); // payload only, continuity counter
    }

    private static void fill(byte[] m, int from, int to, long seed) {
        long x = seed * 0x9E3779B97F4A7C15L + 1;
        for (int i = from; i < to; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            m[i] = (byte) x;
        }
    }

    /**
     * The label of {@code m}, or null if it is not one of these frames whole. A late viewer's first
     * message may begin at a packet inside the frame (where its random-access point is): it must then
     * be the frame's tail, byte for byte.
     */
    static Label read(byte[] m) {
        if (m.length < PACKET || m.length > PACKETS * PACKET || m.length % PACKET != 0) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(m, m.length - PACKET + 4, 16);
        Label l = new Label(b.getInt(), b.getInt(), b.getLong());
        if (l.seq() < 0 || l.epoch() < 0) {
            return null;
        }
        byte[] whole = frame(l);
        return Arrays.equals(m, 0, m.length, whole, whole.length - m.length, whole.length) ? l : null;
    }
}
