package dev.crossbar.server.websocket;

import io.netty.buffer.ByteBuf;

/**
 * Checks that a text message is UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past
 * U+10FFFF), as RFC 6455 requires of every text message, piece by piece: a message that arrives in
 * fragments is checked as each one comes, a character split between two of them included, so a
 * client is told at the first bad fragment.
 *
 * <p>Eight bytes at a time while they are ASCII, which JSON from a lab almost always is; byte by
 * byte through the multi-byte forms of the Unicode standard's table of well-formed sequences
 * (Table 3-7) otherwise. One per connection, used on its event loop.
 */
final class Utf8Check {

    /** Between characters. */
    private static final int START = 0;
    /** One, two or three continuation bytes (0x80-0xBF) still to come. */
    private static final int TAIL_1 = 1;
    private static final int TAIL_2 = 2;
    private static final int TAIL_3 = 3;
    /** After E0: A0-BF, then one more (no overlong three-byte forms). */
    private static final int AFTER_E0 = 4;
    /** After ED: 80-9F, then one more (no surrogates). */
    private static final int AFTER_ED = 5;
    /** After F0: 90-BF, then two more (no overlong four-byte forms). */
    private static final int AFTER_F0 = 6;
    /** After F4: 80-8F, then two more (nothing past U+10FFFF). */
    private static final int AFTER_F4 = 7;
    private static final int INVALID = 8;

    private static final long HIGH_BITS = 0x8080808080808080L;

    private int state = START;

    /** Whether {@code bytes} (its readable bytes, not consumed) is a whole UTF-8 text. */
    static boolean isText(ByteBuf bytes) {
        Utf8Check check = new Utf8Check();
        return check.update(bytes) && check.end();
    }

    /**
     * Takes the next piece of the message (its readable bytes, not consumed).
     *
     * @return false once the bytes so far cannot begin any UTF-8 text
     */
    boolean update(ByteBuf bytes) {
        int i = bytes.readerIndex();
        int end = bytes.writerIndex();
        int s = state;
        while (i < end && s != INVALID) {
            if (s == START) {
                while (end - i >= 8 && (bytes.getLong(i) & HIGH_BITS) == 0) {
                    i += 8;
                }
                if (i == end) {
                    break;
                }
            }
            s = next(s, bytes.getByte(i++) & 0xFF);
        }
        state = s;
        return s != INVALID;
    }

    /** The message has ended: whether it ended between characters. Starts over for the next message. */
    boolean end() {
        boolean whole = state == START;
        state = START;
        return whole;
    }

    private static int next(int state, int b) {
        switch (state) {
            case START:
                if (b < 0x80) {
                    return START;
                }
                if (b >= 0xC2 && b <= 0xDF) {
                    return TAIL_1;
                }
                if (b == 0xE0) {
                    return AFTER_E0;
                }
                if (b == 0xED) {
                    return AFTER_ED;
                }
                if (b >= 0xE1 && b <= 0xEF) {
                    return TAIL_2;
                }
                if (b == 0xF0) {
                    return AFTER_F0;
                }
                if (b >= 0xF1 && b <= 0xF3) {
                    return TAIL_3;
                }
                return b == 0xF4 ? AFTER_F4 : INVALID;
            case TAIL_1:
            case TAIL_2:
            case TAIL_3:
                return b >= 0x80 && b <= 0xBF ? state - 1 : INVALID;
            case AFTER_E0:
                return b >= 0xA0 && b <= 0xBF ? TAIL_1 : INVALID;
            case AFTER_ED:
                return b >= 0x80 && b <= 0x9F ? TAIL_1 : INVALID;
            case AFTER_F0:
                return b >= 0x90 && b <= 0xBF ? TAIL_2 : INVALID;
            case AFTER_F4:
                return b >= 0x80 && b <= 0x8F ? TAIL_2 : INVALID;
            default:
                return INVALID;
        }
    }
}
