package dev.crossbar.core.video;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Finds, in one publisher's stream of WebSocket messages, the MPEG-TS packets where a video decoder
 * can start: the packets {@link GopBuffer} cuts at so that a viewer who joins mid-stream gets a
 * keyframe first. One per publisher; not thread-safe (the publisher's event loop feeds it).
 *
 * <h2>What counts as a random-access point</h2>
 * A 188-byte TS packet that starts a video PES (payload_unit_start_indicator, PES stream_id
 * 0xE0-0xEF) and whose adaptation field sets random_access_indicator, which ffmpeg's mpegts muxer
 * does on every keyframe. A stream that has never set that bit on a video packet is judged by
 * content instead: the PES payload begins with an MPEG-1/2 sequence header ({@code 00 00 01 B3}) or
 * holds an H.264 SPS or IDR slice before its first slice. Once the bit has been seen, content alone
 * no longer counts.
 *
 * <h2>Chunking and the cut</h2>
 * Messages are the publisher's chunks: usually whole packets, but any split is handled. The tracker
 * keeps the packet phase and the partial packet (at most 187 bytes, copied) across messages and
 * judges a packet once it is whole. {@link #feed} reports the stream position of the first byte (the
 * sync byte) of the last random-access point whose packet was completed by this message, as an
 * offset from the message's first readable byte:
 * <ul>
 *   <li>{@code 0 <= offset < readableBytes}: the packet begins in this message;</li>
 *   <li>{@code offset < 0}: the packet began {@code -offset} bytes before this message, in the tail of
 *       earlier messages, and ends in this one: at most {@link #MAX_CARRY} bytes before, or, in the
 *       message that completes the detection below, anywhere since the stream's first byte (fewer
 *       than {@link #DETECTION_BYTES}). {@link GopBuffer#add} keeps exactly those bytes, so the cut
 *       is always at a packet boundary;</li>
 *   <li>{@link #NONE}: no random-access point completed in this message.</li>
 * </ul>
 * A point is reported once, for the message that completes its packet.
 *
 * <h2>Detection and resync</h2>
 * The stream is {@link State#UNKNOWN} until {@value #DETECTION_BYTES} bytes are seen; it is
 * {@link State#MPEG_TS} if, at some phase within the first 188 bytes, five sync bytes (0x47) follow
 * each other 188 bytes apart, and {@link State#NOT_MPEG_TS} otherwise, for good: {@code feed} then
 * only returns {@code NONE} (the relay relays such a stream as before). When a packet
 * boundary lacks its sync byte, the tracker counts a {@link #syncLosses() sync loss} and hunts from
 * that packet's first byte for a new phase by the same five-sync-byte rule, sliding 188 bytes at a
 * time; it stays {@code MPEG_TS}. A point in a packet that began more than {@link #MAX_CARRY} bytes
 * before the message that ends a hunt is not reported (the next keyframe is).
 *
 * <p>Ownership: {@code feed} only reads; it changes no index or reference count of the message.
 */
public final class RandomAccessTracker {

    /** {@link #feed} found no random-access point. Not -1: negative offsets are valid (see above). */
    public static final int NONE = Integer.MIN_VALUE;
    /** The furthest a reported packet start lies before its message: a packet less one byte. */
    public static final int MAX_CARRY = TsPacket.SIZE - 1;

    /** Bytes judged before the stream is called MPEG-TS or not: five packets at any phase fit. */
    public static final int DETECTION_BYTES = 5 * TsPacket.SIZE;
    private static final int WINDOW = DETECTION_BYTES;
    private static final int SYNCS = 5;
    private static final long NO_POINT = Long.MIN_VALUE;

    /** What the tracker has concluded about the stream. */
    public enum State {
        /** Fewer than {@value RandomAccessTracker#DETECTION_BYTES} bytes seen. */
        UNKNOWN,
        /** Sync bytes every 188 bytes: random-access points are tracked. */
        MPEG_TS,
        /** Not MPEG-TS: relayed as is, never cut. */
        NOT_MPEG_TS
    }

    private final byte[] carry = new byte[TsPacket.SIZE];
    private final ByteBuf carryBuf = Unpooled.wrappedBuffer(carry);
    private final byte[] window = new byte[WINDOW];
    private final ByteBuf windowBuf = Unpooled.wrappedBuffer(window);

    private State state = State.UNKNOWN;
    private boolean inSync;
    private boolean randomAccessIndicatorSeen;
    private int carryLength;
    private int windowLength;
    /** Stream position of {@code window[0]}. */
    private long windowPosition;
    /** Stream position of the next byte fed. */
    private long position;
    /** Stream position of the last point found during the current {@code feed}. */
    private long found = NO_POINT;
    private long points;
    private long syncLosses;

    /**
     * Reads the next message of the stream and returns where the last random-access point it
     * completes begins, relative to its reader index: an offset below {@code readableBytes} (negative:
     * the packet began in earlier messages, see the class comment) or {@link #NONE}.
     */
    public int feed(ByteBuf message) {
        int from = message.readerIndex();
        int end = message.writerIndex();
        long start = position;
        position += end - from;
        if (state == State.NOT_MPEG_TS) {
            return NONE;
        }
        long base = start - from; // stream position of message index 0
        // The message that ends the first detection may report any point since the stream began.
        long floor = state == State.UNKNOWN ? 0 : start - MAX_CARRY;
        found = NO_POINT;
        int i = from;
        while (i < end && state != State.NOT_MPEG_TS) {
            i = inSync ? walk(message, i, end, base) : hunt(message, i, end, base);
        }
        if (found == NO_POINT || found < floor) {
            return NONE;
        }
        return (int) (found - start);
    }

    /** What the tracker has concluded about the stream so far. */
    public State state() {
        return state;
    }

    /** Random-access points found since the stream began. */
    public long randomAccessPoints() {
        return points;
    }

    /** Packet boundaries found without their sync byte (each starts a hunt for a new phase). */
    public long syncLosses() {
        return syncLosses;
    }

    /** Whether the stream marks keyframes with random_access_indicator (else content decides). */
    public boolean usesRandomAccessIndicator() {
        return randomAccessIndicatorSeen;
    }

    /** Walks whole packets at the known phase; returns where it stopped (end, or where sync was lost). */
    private int walk(ByteBuf buf, int i, int end, long base) {
        if (carryLength > 0) {
            int n = Math.min(TsPacket.SIZE - carryLength, end - i);
            buf.getBytes(i, carry, carryLength, n);
            carryLength += n;
            i += n;
            if (carryLength < TsPacket.SIZE) {
                return i;
            }
            carryLength = 0;
            long packetStart = base + i - TsPacket.SIZE;
            if (!packet(carryBuf, 0, packetStart)) {
                startHunt(packetStart);
                append(carryBuf, 0, TsPacket.SIZE);
                return i;
            }
        }
        while (end - i >= TsPacket.SIZE) {
            if (!packet(buf, i, base + i)) {
                startHunt(base + i);
                return i;
            }
            i += TsPacket.SIZE;
        }
        if (i < end) {
            carryLength = end - i;
            buf.getBytes(i, carry, 0, carryLength);
        }
        return end;
    }

    /** Judges one whole packet; false if its sync byte is missing. */
    private boolean packet(ByteBuf buf, int at, long streamPosition) {
        // The 4-byte header in one read: most packets continue a PES and need nothing more.
        int header = buf.getInt(at);
        if ((header >>> 24) != TsPacket.SYNC) {
            syncLosses++;
            return false;
        }
        if ((header & TsPacket.HEADER_PAYLOAD_UNIT_START) == 0) {
            return true;
        }
        int kind = TsPacket.classify(buf, at);
        if (kind == TsPacket.RANDOM_ACCESS_INDICATOR) {
            randomAccessIndicatorSeen = true;
            point(streamPosition);
        } else if (kind == TsPacket.KEYFRAME_CONTENT && !randomAccessIndicatorSeen) {
            point(streamPosition);
        }
        return true;
    }

    private void point(long streamPosition) {
        found = streamPosition;
        points++;
    }

    private void startHunt(long streamPosition) {
        inSync = false;
        carryLength = 0;
        windowLength = 0;
        windowPosition = streamPosition;
    }

    /** Collects bytes into the window and looks for a phase once it is full. */
    private int hunt(ByteBuf buf, int i, int end, long base) {
        if (windowLength == 0) {
            windowPosition = base + i;
        }
        int n = append(buf, i, end - i);
        i += n;
        if (windowLength < WINDOW) {
            return i;
        }
        int phase = phase();
        if (phase < 0) {
            if (state == State.UNKNOWN) {
                state = State.NOT_MPEG_TS;
                return end;
            }
            System.arraycopy(window, TsPacket.SIZE, window, 0, WINDOW - TsPacket.SIZE);
            windowLength -= TsPacket.SIZE;
            windowPosition += TsPacket.SIZE;
            return i;
        }
        state = State.MPEG_TS;
        inSync = true;
        windowLength = 0;
        // The window's packets at this phase all have their sync byte: the walk cannot lose it.
        walk(windowBuf, phase, WINDOW, windowPosition);
        return i;
    }

    private int append(ByteBuf buf, int i, int length) {
        int n = Math.min(WINDOW - windowLength, length);
        buf.getBytes(i, window, windowLength, n);
        windowLength += n;
        return n;
    }

    /** The first phase at which {@value #SYNCS} sync bytes follow 188 bytes apart, or -1. */
    private int phase() {
        for (int p = 0; p < TsPacket.SIZE; p++) {
            int k = 0;
            while (k < SYNCS && window[p + k * TsPacket.SIZE] == TsPacket.SYNC) {
                k++;
            }
            if (k == SYNCS) {
                return p;
            }
        }
        return -1;
    }
}
