package dev.crossbar.server.cluster;

import java.nio.charset.StandardCharsets;

/**
 * One line from a receiving node to the sending nodes of a lossless topic, on the topic's ack
 * subject ({@link Subjects#ackSubject}): UTF-8, fields separated by one space, the free text last
 * (a node name may contain spaces).
 *
 * <pre>
 * p &lt;receiver&gt; &lt;node&gt;                                  present: a subscription of node's, owed what is sent from now on
 * a &lt;receiver&gt; &lt;stream&gt; &lt;first&gt; &lt;last&gt; &lt;node&gt;        has every message of stream from first to last
 * n &lt;receiver&gt; &lt;stream&gt; &lt;from&gt; &lt;node&gt;                misses message from (and later ones): send again
 * b &lt;receiver&gt; &lt;node&gt;                                  gone: the subscription ended
 * x &lt;stream&gt; &lt;after&gt; &lt;count&gt; &lt;0|1&gt; &lt;why&gt;             a {@link Verdict} on stream: lost for good
 * </pre>
 *
 * <p>{@code receiver} is random, one per subscription, so a node that subscribes again (or restarts)
 * is a new receiver; numbers are decimal, stream ids signed.
 */
record AckLine(char kind, long receiver, long stream, long first, long last, String node, Verdict verdict) {

    static final char PRESENT = 'p';
    static final char ACK = 'a';
    static final char MISSING = 'n';
    static final char BYE = 'b';
    static final char LOST = 'x';

    static byte[] present(long receiver, String node) {
        return utf8(PRESENT + " " + receiver + " " + node);
    }

    static byte[] ack(long receiver, long stream, long first, long last, String node) {
        return utf8(ACK + " " + receiver + " " + stream + " " + first + " " + last + " " + node);
    }

    static byte[] missing(long receiver, long stream, long from, String node) {
        return utf8(MISSING + " " + receiver + " " + stream + " " + from + " " + node);
    }

    static byte[] bye(long receiver, String node) {
        return utf8(BYE + " " + receiver + " " + node);
    }

    static byte[] lost(Verdict v) {
        return utf8(LOST + " " + v.stream() + " " + v.after() + " " + v.count() + " " + (v.atLeast() ? 1 : 0) + " " + v.why());
    }

    /**
     * Reads one line.
     *
     * @throws IllegalArgumentException saying what is wrong, for a line no Crossbar node would send
     */
    static AckLine parse(byte[] data) {
        String s = data == null ? "" : new String(data, StandardCharsets.UTF_8);
        if (s.length() < 3 || s.charAt(1) != ' ') {
            throw new IllegalArgumentException("ack line: '" + shorten(s) + "' (expected: <kind> <fields...>)");
        }
        char kind = s.charAt(0);
        String[] f;
        try {
            switch (kind) {
                case PRESENT, BYE -> {
                    f = fields(s, 3);
                    return new AckLine(kind, Long.parseLong(f[1]), 0, 0, 0, f[2], null);
                }
                case ACK -> {
                    f = fields(s, 6);
                    return new AckLine(kind, Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]),
                            Long.parseLong(f[4]), f[5], null);
                }
                case MISSING -> {
                    f = fields(s, 5);
                    long from = Long.parseLong(f[3]);
                    return new AckLine(kind, Long.parseLong(f[1]), Long.parseLong(f[2]), from, from, f[4], null);
                }
                case LOST -> {
                    f = fields(s, 6);
                    Verdict v = new Verdict(Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]),
                            "1".equals(f[4]), f[5]);
                    return new AckLine(kind, 0, v.stream(), 0, 0, null, v);
                }
                default -> throw new IllegalArgumentException("ack line kind: '" + kind + "' (expected: p, a, n, b or x)");
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("ack line: '" + shorten(s) + "' (a number is not one)", e);
        }
    }

    private static String[] fields(String s, int n) {
        String[] f = s.split(" ", n);
        if (f.length != n || f[n - 1].isEmpty()) {
            throw new IllegalArgumentException("ack line: '" + shorten(s) + "' (expected: " + n + " fields)");
        }
        return f;
    }

    private static String shorten(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "...";
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
