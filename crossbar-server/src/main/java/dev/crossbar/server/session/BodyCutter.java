package dev.crossbar.server.session;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.function.Consumer;

/**
 * Cuts an HTTP request body, as it arrives, into the messages a WebSocket publisher would have sent.
 * A body has no message boundaries of its own (chunked encoding's may be redrawn by any proxy), so
 * messages end where the bytes received so far end, and at a size bound:
 * <ul>
 *   <li>MPEG-TS (declared {@code video/mp2t}, or starting with five sync bytes 188 bytes apart):
 *       whole 188-byte packets, at most {@code tsMessageBytes} per message, so that a keyframe's
 *       packet begins a message, or lies inside one, as the keyframe tracker and the viewers'
 *       skipping expect of a camera's messages;</li>
 *   <li>anything else: each piece of the body as it was received, at most {@code maxMessageBytes}
 *       per message (the HTTP decoder hands over at most 8 KiB at a time).</li>
 * </ul>
 * A body that starts with the sync byte is held until the fifth packet's sync byte is there to tell
 * (753 bytes, once per body); one that starts with any other byte is known at once not to be MPEG-TS. The last
 * bytes of a body go out whatever they are: a stream cut short keeps every byte it sent.
 *
 * <p>Ownership: {@link #add} borrows the buffer it is given: it copies from it, or hands out
 * retained slices of it, and leaves the caller's reference with the caller. Each message handed to
 * the consumer carries one reference, which the consumer takes. What is held between reads (less
 * than one packet, or the bytes still being told apart) is released by {@link #release}.
 */
final class BodyCutter {

    static final int TS_PACKET = 188;
    private static final byte SYNC = 0x47;
    private static final int DETECTION_PACKETS = 5;
    /** Bytes that show five sync bytes 188 apart: the fifth packet's first byte. */
    static final int DETECTION_BYTES = (DETECTION_PACKETS - 1) * TS_PACKET + 1;

    /** What the body is known to be. */
    enum Kind { UNKNOWN, MPEG_TS, BYTES }

    private final ByteBufAllocator alloc;
    private final int tsMessageBytes;
    private final int maxMessageBytes;
    private Kind kind;
    /** Bytes received and not yet handed out; null when none. */
    private ByteBuf pending;

    /**
     * @param mpegTs the body is declared MPEG-TS ({@code Content-Type: video/mp2t})
     * @param tsMessageBytes the largest MPEG-TS message: whole packets of it are used
     * @param maxMessageBytes the relay's message limit: no message is larger
     */
    BodyCutter(ByteBufAllocator alloc, boolean mpegTs, int tsMessageBytes, int maxMessageBytes) {
        this.alloc = alloc;
        this.maxMessageBytes = maxMessageBytes;
        this.tsMessageBytes = Math.max(TS_PACKET, Math.min(tsMessageBytes, maxMessageBytes) / TS_PACKET * TS_PACKET);
        this.kind = mpegTs ? Kind.MPEG_TS : Kind.UNKNOWN;
    }

    Kind kind() {
        return kind;
    }

    /** Bytes a message may hold now; while the kind is unknown, what a body may have held to tell. */
    private int bound() {
        return kind == Kind.MPEG_TS ? tsMessageBytes : maxMessageBytes;
    }

    /**
     * Takes the bytes of {@code piece} (borrowed). Other bodies' pieces go out as they are (a
     * retained slice each, cut at the message limit); MPEG-TS is copied, to be cut at packets, and
     * every message that reaches its bound goes out.
     */
    void add(ByteBuf piece, Consumer<ByteBuf> out) {
        while (piece.isReadable()) {
            if (kind == Kind.BYTES) {
                out.accept(piece.readRetainedSlice(Math.min(piece.readableBytes(), maxMessageBytes)));
                continue;
            }
            if (pending == null) {
                pending = kind == Kind.MPEG_TS ? alloc.directBuffer(tsMessageBytes, tsMessageBytes)
                        : alloc.directBuffer(Math.min(maxMessageBytes, DETECTION_BYTES), maxMessageBytes);
            }
            int n = Math.min(piece.readableBytes(), bound() - pending.readableBytes());
            pending.writeBytes(piece, n);
            if (kind == Kind.UNKNOWN) {
                detect(false);
                if (kind == Kind.BYTES) {
                    emit(out, true); // what was held to tell goes first, as one message
                }
            }
            if (kind == Kind.MPEG_TS && pending != null && pending.readableBytes() >= bound()) {
                emit(out, false);
            }
        }
    }

    /** A read has ended: whole packets of MPEG-TS go (nothing is held of other bodies). */
    void readComplete(Consumer<ByteBuf> out) {
        if (kind != Kind.UNKNOWN) {
            emit(out, false);
        }
    }

    /** The body has ended: everything held goes. */
    void end(Consumer<ByteBuf> out) {
        if (kind == Kind.UNKNOWN) {
            detect(true);
        }
        emit(out, true);
    }

    /** Decides the kind from the first bytes, once there are enough (or the body has ended). */
    private void detect(boolean ended) {
        if (pending == null || !pending.isReadable()) {
            if (ended) {
                kind = Kind.BYTES;
            }
            return;
        }
        int at = pending.readerIndex();
        if (pending.getByte(at) != SYNC) {
            kind = Kind.BYTES;
            return;
        }
        if (pending.readableBytes() < DETECTION_BYTES) {
            if (ended || pending.readableBytes() >= maxMessageBytes) {
                kind = Kind.BYTES;
            }
            return;
        }
        for (int i = 1; i < DETECTION_PACKETS; i++) {
            if (pending.getByte(at + i * TS_PACKET) != SYNC) {
                kind = Kind.BYTES;
                return;
            }
        }
        kind = Kind.MPEG_TS;
    }

    /**
     * Hands out what is held in messages up to the bound: whole packets of MPEG-TS (all of it at the
     * body's end), everything of other bodies. What stays (part of a packet) moves to a buffer of its
     * own, so the messages handed out are never written to again.
     */
    private void emit(Consumer<ByteBuf> out, boolean ended) {
        while (pending != null) {
            int readable = pending.readableBytes();
            int n = Math.min(kind == Kind.MPEG_TS && !ended ? readable - readable % TS_PACKET : readable, bound());
            if (n == 0) {
                break;
            }
            if (n == readable && pending.readerIndex() == 0) {
                ByteBuf message = pending;
                pending = null;
                out.accept(message);
            } else {
                out.accept(pending.readRetainedSlice(n));
            }
        }
        if (pending != null && (!pending.isReadable() || pending.readerIndex() > 0)) {
            ByteBuf rest = pending;
            pending = null;
            if (rest.isReadable()) {
                pending = alloc.directBuffer(tsMessageBytes, tsMessageBytes);
                pending.writeBytes(rest);
            }
            rest.release();
        }
    }

    /** Bytes held between reads. */
    int pendingBytes() {
        return pending == null ? 0 : pending.readableBytes();
    }

    /** Releases what is held: the body will not end (the poster went away). */
    void release() {
        if (pending != null) {
            pending.release();
            pending = null;
        }
    }
}
