package dev.crossbar.server.fuzz;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What a correct relay does with the bytes a WebSocket client sends (RFC 6455 and
 * docs/protocol.md), computed independently of Netty: the whole messages it relays, the pings it
 * answers, and the close code of the first violation, if one is certain.
 *
 * <p>The model stops at anything it does not predict exactly (a client close frame, or input that
 * ends mid-frame); the relay may then do more, but never anything other than what was predicted up
 * to that point.
 */
final class WireModel {

    /** A message as relayed: its type and exact bytes. */
    record Message(boolean text, byte[] data) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Message m && m.text == text && Arrays.equals(m.data, data);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(data) * 31 + (text ? 1 : 0);
        }

        @Override
        public String toString() {
            StringBuilder hex = new StringBuilder();
            for (int i = 0; i < Math.min(data.length, 48); i++) {
                hex.append(String.format("%02x", data[i] & 0xff));
            }
            return (text ? "text" : "binary") + "[" + data.length + "]" + hex + (data.length > 48 ? "..." : "");
        }
    }

    final List<Message> messages = new ArrayList<>();
    final List<byte[]> pings = new ArrayList<>();
    /** The close code the relay must send for the first violation, or 0 if none is certain. */
    int closeCode;
    /** Why the model stopped (for failure messages). */
    String stoppedAt = "end of input";

    private WireModel() {
    }

    /** Models {@code in} from {@code offset}: client frames to a relay whose message limit is {@code maxMessage}. */
    static WireModel of(byte[] in, int offset, int maxMessage) {
        WireModel m = new WireModel();
        m.run(in, offset, maxMessage);
        return m;
    }

    private void stop(int code, String why) {
        closeCode = code;
        stoppedAt = why;
    }

    private void run(byte[] in, int p, int maxMessage) {
        boolean inMessage = false;
        boolean messageText = false;
        java.io.ByteArrayOutputStream message = new java.io.ByteArrayOutputStream();
        Utf8 utf8 = new Utf8();
        while (true) {
            if (in.length - p < 2) {
                stop(0, "input ends inside a frame header");
                return;
            }
            int b0 = in[p] & 0xff;
            int b1 = in[p + 1] & 0xff;
            boolean fin = (b0 & 0x80) != 0;
            int rsv = b0 & 0x70;
            int opcode = b0 & 0x0f;
            boolean masked = (b1 & 0x80) != 0;
            int len7 = b1 & 0x7f;
            boolean control = opcode >= 8;
            // Everything decidable from the first two bytes: a protocol error (1002).
            if (rsv != 0) {
                stop(1002, "reserved bits set");
                return;
            }
            if (!masked) {
                stop(1002, "unmasked client frame");
                return;
            }
            if (control) {
                if (!fin) {
                    stop(1002, "fragmented control frame");
                    return;
                }
                if (len7 > 125) {
                    stop(1002, "control frame longer than 125 bytes");
                    return;
                }
                if (opcode > 0xA) {
                    stop(1002, "reserved control opcode");
                    return;
                }
                if (opcode == 0x8 && len7 == 1) {
                    stop(1002, "close frame with a one-byte body");
                    return;
                }
            } else {
                if (opcode > 0x2) {
                    stop(1002, "reserved data opcode");
                    return;
                }
                if (opcode == 0 && !inMessage) {
                    stop(1002, "continuation without a message");
                    return;
                }
                if (opcode != 0 && inMessage) {
                    stop(1002, "new data frame inside a fragmented message");
                    return;
                }
            }
            p += 2;
            long len = len7;
            if (len7 == 126) {
                if (in.length - p < 2) {
                    stop(0, "input ends inside a length");
                    return;
                }
                len = ((in[p] & 0xff) << 8) | (in[p + 1] & 0xff);
                p += 2;
                if (len < 126) {
                    stop(1002, "length not minimally encoded");
                    return;
                }
            } else if (len7 == 127) {
                if (in.length - p < 8) {
                    stop(0, "input ends inside a length");
                    return;
                }
                len = 0;
                for (int i = 0; i < 8; i++) {
                    len = (len << 8) | (in[p + i] & 0xff);
                }
                p += 8;
                if (len < 65536) { // also a negative (most significant bit set) length
                    stop(1002, "length not minimally encoded");
                    return;
                }
            }
            if (len > maxMessage) {
                stop(1009, "frame longer than the message limit");
                return;
            }
            if (in.length - p < 4 + len) {
                stop(0, "input ends inside a frame");
                return;
            }
            byte[] key = Arrays.copyOfRange(in, p, p + 4);
            p += 4;
            byte[] payload = new byte[(int) len];
            for (int i = 0; i < len; i++) {
                payload[i] = (byte) (in[p + i] ^ key[i & 3]);
            }
            p += (int) len;
            if (control) {
                if (opcode == 0x9) {
                    pings.add(payload);
                    continue;
                }
                if (opcode == 0xA) {
                    continue;
                }
                stop(0, "client close frame"); // the relay answers it; its details are Netty's
                return;
            }
            if (opcode != 0) {
                inMessage = true;
                messageText = opcode == 0x1;
                message.reset();
                utf8 = new Utf8();
            }
            if (messageText && !utf8.feed(payload)) {
                stop(1007, "invalid UTF-8 in a text message");
                return;
            }
            // Netty's UTF-8 check runs before the relay's message limit, so it decides first.
            if (fin && messageText && !utf8.complete()) {
                stop(1007, "text message ends inside a UTF-8 sequence");
                return;
            }
            if ((long) message.size() + payload.length > maxMessage) {
                stop(1009, "message longer than the limit");
                return;
            }
            message.writeBytes(payload);
            if (fin) {
                messages.add(new Message(messageText, message.toByteArray()));
                inMessage = false;
            }
        }
    }

    /** An incremental UTF-8 validator (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF). */
    static final class Utf8 {
        private int needed;
        private int lower = 0x80;
        private int upper = 0xBF;

        /** False as soon as the bytes so far cannot begin valid UTF-8. */
        boolean feed(byte[] bytes) {
            for (byte x : bytes) {
                int b = x & 0xff;
                if (needed == 0) {
                    if (b <= 0x7F) {
                        continue;
                    } else if (b >= 0xC2 && b <= 0xDF) {
                        needed = 1;
                    } else if (b >= 0xE0 && b <= 0xEF) {
                        lower = b == 0xE0 ? 0xA0 : 0x80;
                        upper = b == 0xED ? 0x9F : 0xBF;
                        needed = 2;
                    } else if (b >= 0xF0 && b <= 0xF4) {
                        lower = b == 0xF0 ? 0x90 : 0x80;
                        upper = b == 0xF4 ? 0x8F : 0xBF;
                        needed = 3;
                    } else {
                        return false;
                    }
                } else {
                    if (b < lower || b > upper) {
                        return false;
                    }
                    lower = 0x80;
                    upper = 0xBF;
                    needed--;
                }
            }
            return true;
        }

        boolean complete() {
            return needed == 0;
        }
    }
}
