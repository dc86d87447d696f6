package dev.crossbar.server.cluster;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * What the sending node of a lossless stream tells its receiving nodes besides the messages: an
 * {@link Envelope} with the {@code CONTROL} flag on the topic's own subject, so it arrives in order
 * with them. The envelope's sequence field holds the stream's last sequence number, its chunk
 * field the kind, and the record follows (big-endian).
 *
 * <pre>
 * TAIL  (1)  every heartbeat while the stream has receivers, and as it ends:
 *            1 byte: 1 if the stream ended (no senders left; nothing more will be sent), else 0;
 *            then the sending node's name
 * HELLO (2)  the node began listening for acknowledgements: receivers answer with their presence now
 * LOST  (3)  a {@link Verdict}: 8 bytes after, 8 bytes count, 1 byte at least (0|1), then why
 * </pre>
 */
final class LinkControl {

    static final int TAIL = 1;
    static final int HELLO = 2;
    static final int LOST = 3;

    final int kind;
    final long stream;
    final long last;
    /** TAIL: whether the stream ended: nothing more will be sent, or sent again. */
    final boolean ended;
    /** TAIL: the sending node's name. */
    final String node;
    /** LOST: the loss. */
    final Verdict verdict;

    private LinkControl(int kind, long stream, long last, boolean ended, String node, Verdict verdict) {
        this.kind = kind;
        this.stream = stream;
        this.last = last;
        this.ended = ended;
        this.node = node;
        this.verdict = verdict;
    }

    static byte[] tail(long stream, long last, boolean ended, String node, byte[] keyBytes) {
        byte[] name = node.getBytes(StandardCharsets.UTF_8);
        ByteBuffer body = ByteBuffer.allocate(1 + name.length).put((byte) (ended ? 1 : 0)).put(name);
        return record(TAIL, stream, last, body.array(), keyBytes);
    }

    static byte[] hello(long stream, long last, byte[] keyBytes) {
        return record(HELLO, stream, last, new byte[0], keyBytes);
    }

    static byte[] lost(Verdict v, long last, byte[] keyBytes) {
        byte[] why = v.why().getBytes(StandardCharsets.UTF_8);
        ByteBuffer body = ByteBuffer.allocate(17 + why.length).putLong(v.after()).putLong(v.count())
                .put((byte) (v.atLeast() ? 1 : 0)).put(why);
        return record(LOST, v.stream(), last, body.array(), keyBytes);
    }

    private static byte[] record(int kind, long stream, long last, byte[] body, byte[] keyBytes) {
        int header = Envelope.headerLength(keyBytes);
        byte[] data = new byte[header + body.length];
        Envelope.writeHeader(data, Envelope.CONTROL | Envelope.LOSSLESS, stream, last, kind, body.length, keyBytes);
        System.arraycopy(body, 0, data, header, body.length);
        return data;
    }

    /**
     * Reads the record of a control envelope.
     *
     * @throws IllegalArgumentException saying what is wrong, for a record no Crossbar node would send
     */
    static LinkControl parse(Envelope e, byte[] data) {
        if (e.payloadLength != e.totalLength) {
            throw new IllegalArgumentException("control record: " + e.payloadLength + " of " + e.totalLength + " bytes");
        }
        ByteBuffer b = ByteBuffer.wrap(data, e.payloadOffset, e.payloadLength);
        switch (e.part) {
            case TAIL -> {
                need(b, 1, "tail");
                boolean ended = b.get() != 0;
                return new LinkControl(TAIL, e.stream, e.seq, ended, rest(b), null);
            }
            case HELLO -> {
                return new LinkControl(HELLO, e.stream, e.seq, false, null, null);
            }
            case LOST -> {
                need(b, 17, "lost");
                long after = b.getLong();
                long count = b.getLong();
                boolean atLeast = b.get() != 0;
                return new LinkControl(LOST, e.stream, e.seq, false, null,
                        new Verdict(e.stream, after, count, atLeast, rest(b)));
            }
            default -> throw new IllegalArgumentException("control record kind: " + e.part + " (expected: 1, 2 or 3)");
        }
    }

    private static void need(ByteBuffer b, int n, String what) {
        if (b.remaining() < n) {
            throw new IllegalArgumentException(what + " record: " + b.remaining() + " bytes (expected: >= " + n + ")");
        }
    }

    private static String rest(ByteBuffer b) {
        return new String(b.array(), b.position(), b.remaining(), StandardCharsets.UTF_8);
    }
}
