package dev.crossbar.server.websocket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The relay's UTF-8 check agrees with the JDK's strict decoder on every input, whole or cut in two
 * anywhere (a character split between two fragments), on the edges of each multi-byte form and on
 * random text, valid and damaged.
 */
class Utf8CheckTest {

    @Test
    void theEdgesOfEveryForm() {
        String[] valid = {"", "a", "7f", "c280", "dfbf", "e0a080", "e0bfbf", "e18080", "ecbfbf", "ed8080", "ed9fbf",
            "ee8080", "efbfbf", "f0908080", "f0bfbfbf", "f1808080", "f3bfbfbf", "f4808080", "f48fbfbf"};
        String[] invalid = {"80", "bf", "c0af", "c1bf", "c2", "c27f", "c2c0", "e080af", "e09fbf", "eda080", "edbfbf",
            "e080", "f08f bfbf", "f4908080", "f5808080", "ff", "fe", "f0908080 80", "e2 82"};
        for (String hex : valid) {
            byte[] bytes = bytes(hex);
            assertTrue(strict(bytes), hex + " (the JDK's view)");
            assertAgrees(bytes);
        }
        for (String hex : invalid) {
            byte[] bytes = bytes(hex);
            assertFalse(strict(bytes), hex + " (the JDK's view)");
            assertAgrees(bytes);
        }
    }

    @Test
    void randomTextWholeAndDamaged() {
        Random random = new Random(7);
        for (int n = 0; n < 3000; n++) {
            StringBuilder text = new StringBuilder();
            int length = random.nextInt(40);
            for (int i = 0; i < length; i++) {
                int kind = random.nextInt(4);
                int cp = kind == 0 ? random.nextInt(0x80) : kind == 1 ? 0x80 + random.nextInt(0x780)
                        : kind == 2 ? 0x800 + random.nextInt(0xF800) : 0x10000 + random.nextInt(0x100000);
                if (cp >= 0xD800 && cp <= 0xDFFF) {
                    cp = 'x';
                }
                text.appendCodePoint(cp);
            }
            byte[] bytes = text.toString().getBytes(StandardCharsets.UTF_8);
            assertAgrees(bytes);
            if (bytes.length > 0) {
                bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256); // usually no longer UTF-8
                assertAgrees(bytes);
            }
        }
    }

    @Test
    void longAsciiRunsAroundAMultiByteCharacter() {
        byte[] bytes = ("0123456789abcdef".repeat(3) + "é" + "0123456789abcdef".repeat(2) + "€")
                .getBytes(StandardCharsets.UTF_8);
        assertAgrees(bytes);
        bytes[20] = (byte) 0x80;
        assertAgrees(bytes);
    }

    /** Whole, and cut in two at every byte, the verdict is the JDK's; the check starts over after each message. */
    private static void assertAgrees(byte[] bytes) {
        boolean expected = strict(bytes);
        Utf8Check check = new Utf8Check();
        assertEquals(expected, check.update(buf(bytes, 0, bytes.length)) & check.end(), HexFormat.of().formatHex(bytes));
        assertEquals(expected, Utf8Check.isText(buf(bytes, 0, bytes.length)));
        for (int cut = 0; cut <= bytes.length; cut++) {
            boolean first = check.update(buf(bytes, 0, cut));
            boolean whole = first && check.update(buf(bytes, cut, bytes.length - cut)) && check.end();
            if (!first || !whole) {
                check.end(); // starts over, as the reader does after a violation
            }
            assertEquals(expected, whole, HexFormat.of().formatHex(bytes) + " cut at " + cut);
        }
    }

    /** A buffer with something before and after the bytes, so that only the readable ones count. */
    private static ByteBuf buf(byte[] bytes, int from, int length) {
        ByteBuf b = Unpooled.buffer(length + 2).writeByte(0xFF).writeBytes(bytes, from, length).writeByte(0xFF);
        return b.slice(1, length);
    }

    private static boolean strict(byte[] bytes) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    private static byte[] bytes(String hex) {
        return hex.equals("a") ? new byte[] {'a'} : HexFormat.of().parseHex(hex.replace(" ", ""));
    }
}
