package dev.crossbar.server.cluster;

import java.nio.charset.StandardCharsets;

/**
 * A loss on a lossless stream that no node can make good: the stream, the last message before the
 * hole, how many messages it holds, whether more may be missing (the sending node died, so nobody
 * knows its last one), and why. Every member of the topic is closed with it (4010).
 *
 * @param stream  the sending node's stream id (random, one per node and topic)
 * @param after   the last message of the stream before the hole (0: none)
 * @param count   messages known lost
 * @param atLeast whether more than {@code count} may be lost
 * @param why     what happened, in words, naming the nodes
 */
record Verdict(long stream, long after, long count, boolean atLeast, String why) {

    /** A WebSocket close frame carries at most 123 bytes of reason. */
    static final int MAX_REASON_BYTES = 123;

    /**
     * The close reason clients get: {@code lost <count>[+] after <after>: <why>}, the {@code +}
     * when more may be lost, cut to fit a close frame (never inside a character).
     */
    String reason() {
        String s = "lost " + count + (atLeast ? "+" : "") + " after " + after + ": " + why;
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        if (utf8.length <= MAX_REASON_BYTES) {
            return s;
        }
        int end = MAX_REASON_BYTES;
        while (end > 0 && (utf8[end] & 0xC0) == 0x80) {
            end--; // a continuation byte: the character starts earlier
        }
        return new String(utf8, 0, end, StandardCharsets.UTF_8);
    }
}
