package dev.crossbar.server.cluster;

import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.schema.Schema;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;

/**
 * Maps a topic to the NATS subject that carries it, so that no topic can reach another's subject or
 * a wildcard.
 *
 * <p>A subject is {@code crossbar.<schema>.<token>}. The schema part is the schema's fixed name with
 * everything but {@code [a-z0-9]} removed ({@code nn}, {@code 1n}). The token is {@code t} followed by
 * the topic name's UTF-8 bytes in lower-case base32hex without padding (alphabet {@code 0-9a-v}), an
 * injective encoding whose characters have no meaning to NATS: no {@code .}, {@code *}, {@code >} or
 * whitespace can appear, so the topic {@code >} is only itself. A name whose token would be longer than
 * {@link #MAX_DIRECT_TOKEN} characters is carried as {@code h} followed by the base32hex SHA-256 of its
 * UTF-8 bytes; the two token spaces cannot meet (different first letter), and because a hash can in
 * principle collide, such messages carry their full topic key in the envelope, checked on receipt.
 */
final class Subjects {

    static final String PREFIX = "crossbar.";
    /** Longest direct token: subjects stay short in server tables and operator tools. */
    static final int MAX_DIRECT_TOKEN = 200;

    private static final char[] BASE32HEX = "0123456789abcdefghijklmnopqrstuv".toCharArray();

    private Subjects() {
    }

    static String subject(TopicKey key) {
        return PREFIX + schemaToken(key.schema()) + "." + topicToken(key.name());
    }

    /**
     * The subject on which nodes tell each other that their receivers hold a lossless topic back:
     * {@code crossbar.hold.<schema>.<token>}, the topic's own subject with {@code hold.} after the
     * prefix (no topic subject starts so: schema tokens are {@code nn} and {@code 1n}).
     */
    static String holdSubject(TopicKey key) {
        return PREFIX + "hold." + schemaToken(key.schema()) + "." + topicToken(key.name());
    }

    /**
     * The subject on which receiving nodes of a lossless topic acknowledge its senders' messages and
     * ask for those they miss ({@link AckLine}): {@code crossbar.ack.<schema>.<token>}, apart from
     * topic and hold subjects as those are from each other.
     */
    static String ackSubject(TopicKey key) {
        return PREFIX + "ack." + schemaToken(key.schema()) + "." + topicToken(key.name());
    }

    /** Whether messages on {@code subject} must carry their topic key (hashed subject). */
    static boolean isHashed(String subject) {
        return subject.charAt(subject.lastIndexOf('.') + 1) == 'h';
    }

    static String schemaToken(Schema schema) {
        String token = schema.name().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
        if (token.isEmpty()) {
            throw new IllegalArgumentException("schema: '" + schema.name() + "' (expected: a name with letters or digits)");
        }
        return token;
    }

    static String topicToken(String name) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        // 8 characters per 5 bytes, rounded up, plus the 't'.
        long directLength = 1 + (utf8.length * 8L + 4) / 5;
        if (directLength <= MAX_DIRECT_TOKEN) {
            return "t" + base32hex(utf8);
        }
        return "h" + base32hex(sha256(utf8));
    }

    /** Lower-case base32hex (RFC 4648 section 7) without padding. */
    static String base32hex(byte[] data) {
        StringBuilder out = new StringBuilder((data.length * 8 + 4) / 5);
        int buffer = 0;
        int bits = 0;
        for (byte b : data) {
            buffer = (buffer << 8) | (b & 0xFF);
            bits += 8;
            while (bits >= 5) {
                out.append(BASE32HEX[(buffer >>> (bits - 5)) & 0x1F]);
                bits -= 5;
            }
        }
        if (bits > 0) {
            out.append(BASE32HEX[(buffer << (5 - bits)) & 0x1F]);
        }
        return out.toString();
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
