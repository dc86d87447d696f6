package dev.crossbar.server.cluster;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The header Crossbar puts in front of every payload it sends through NATS (big-endian), and its
 * parser. One message is one NATS message unless it is larger than the server's {@code max_payload},
 * when it goes as consecutive chunks of one stream with the same sequence number.
 *
 * <pre>
 * offset size field
 *  0     1    version (1)
 *  1     1    flags: 0x01 text, 0x02 more chunks follow, 0x04 topic key present,
 *             0x08 lossless stream, 0x10 control record (not a message)
 *  2     8    stream id: random, one per (sending node, topic)
 * 10     8    sequence number of the message in its stream, from 1 (control: the stream's last, from 0)
 * 18     4    chunk index, 0 for the first (or only) chunk (control: the record's kind)
 * 22     4    length of the whole message in bytes (control: of the record)
 * 26     2    [flag 0x04] key length k
 * 28     k    [flag 0x04] topic key, UTF-8 "&lt;schema&gt; &lt;topic&gt;", on hashed subjects
 * ..          this chunk's bytes of the message
 * </pre>
 *
 * <p>The stream and sequence let a receiving node drop duplicates and count what NATS lost (a gap in
 * the sequence), and let it reassemble chunks in order; the type travels in the flags, so text stays
 * text across nodes without NATS headers. A lossless stream's messages carry {@link #LOSSLESS}, and
 * its sender's {@link LinkControl} records travel on the same subject, in order with its messages.
 */
final class Envelope {

    static final int VERSION = 1;
    static final int TEXT = 0x01;
    static final int MORE = 0x02;
    static final int KEY = 0x04;
    static final int LOSSLESS = 0x08;
    static final int CONTROL = 0x10;
    static final int FIXED_BYTES = 26;

    final int flags;
    final long stream;
    final long seq;
    final int part;
    final int totalLength;
    /** Topic key as sent, or null when the subject is not hashed. */
    final String key;
    final int payloadOffset;
    final int payloadLength;

    private Envelope(int flags, long stream, long seq, int part, int totalLength, String key,
                     int payloadOffset, int payloadLength) {
        this.flags = flags;
        this.stream = stream;
        this.seq = seq;
        this.part = part;
        this.totalLength = totalLength;
        this.key = key;
        this.payloadOffset = payloadOffset;
        this.payloadLength = payloadLength;
    }

    boolean text() {
        return (flags & TEXT) != 0;
    }

    boolean more() {
        return (flags & MORE) != 0;
    }

    boolean lossless() {
        return (flags & LOSSLESS) != 0;
    }

    boolean control() {
        return (flags & CONTROL) != 0;
    }

    /** Header size for a message with (non-null) or without {@code keyBytes}. */
    static int headerLength(byte[] keyBytes) {
        return FIXED_BYTES + (keyBytes == null ? 0 : 2 + keyBytes.length);
    }

    /** Writes the header at the start of {@code dst}; the chunk's bytes follow at {@link #headerLength}. */
    static void writeHeader(byte[] dst, boolean text, boolean more, long stream, long seq, int part, int totalLength,
                            byte[] keyBytes) {
        writeHeader(dst, (text ? TEXT : 0) | (more ? MORE : 0), stream, seq, part, totalLength, keyBytes);
    }

    /** As above with the flags given ({@link #KEY} is added when there are {@code keyBytes}). */
    static void writeHeader(byte[] dst, int flags, long stream, long seq, int part, int totalLength, byte[] keyBytes) {
        ByteBuffer b = ByteBuffer.wrap(dst);
        flags |= keyBytes != null ? KEY : 0;
        b.put((byte) VERSION).put((byte) flags).putLong(stream).putLong(seq).putInt(part).putInt(totalLength);
        if (keyBytes != null) {
            b.putShort((short) keyBytes.length).put(keyBytes);
        }
    }

    /**
     * Reads the header of one NATS message's data.
     *
     * @throws IllegalArgumentException saying what is wrong, for data no Crossbar node would send
     */
    static Envelope parse(byte[] data) {
        if (data == null || data.length < FIXED_BYTES) {
            throw new IllegalArgumentException("envelope: " + (data == null ? 0 : data.length)
                    + " bytes (expected: >= " + FIXED_BYTES + ")");
        }
        ByteBuffer b = ByteBuffer.wrap(data);
        int version = b.get() & 0xFF;
        if (version != VERSION) {
            throw new IllegalArgumentException("envelope version: " + version + " (expected: " + VERSION + ")");
        }
        int flags = b.get() & 0xFF;
        if ((flags & ~(TEXT | MORE | KEY | LOSSLESS | CONTROL)) != 0) {
            throw new IllegalArgumentException("envelope flags: 0x" + Integer.toHexString(flags) + " (unknown bits)");
        }
        long stream = b.getLong();
        long seq = b.getLong();
        int part = b.getInt();
        int total = b.getInt();
        // A control record may speak for a stream that has sent nothing yet.
        if (seq < ((flags & CONTROL) != 0 ? 0 : 1) || part < 0 || total < 0) {
            throw new IllegalArgumentException("envelope: seq " + seq + ", part " + part + ", length " + total
                    + " (expected: seq > 0 (control: >= 0), part >= 0, length >= 0)");
        }
        String key = null;
        if ((flags & KEY) != 0) {
            if (b.remaining() < 2) {
                throw new IllegalArgumentException("envelope: key length missing");
            }
            int k = b.getShort() & 0xFFFF;
            if (b.remaining() < k) {
                throw new IllegalArgumentException("envelope: key of " + k + " bytes, " + b.remaining() + " left");
            }
            key = new String(data, b.position(), k, StandardCharsets.UTF_8);
            b.position(b.position() + k);
        }
        int offset = b.position();
        int length = data.length - offset;
        if (length > total) {
            throw new IllegalArgumentException("envelope: chunk of " + length + " bytes in a message of " + total);
        }
        return new Envelope(flags, stream, seq, part, total, key, offset, length);
    }
}
