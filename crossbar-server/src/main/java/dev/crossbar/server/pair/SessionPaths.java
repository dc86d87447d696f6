package dev.crossbar.server.pair;

import java.security.SecureRandom;
import java.util.Base64;

/**
 * Session paths: {@code /session/} followed by 128 random bits in unpadded base64url (22 characters).
 * The prefix is reserved: no topic can be named below it.
 */
public final class SessionPaths {

    /** The reserved prefix; {@code /session} itself is reserved too. */
    public static final String PREFIX = "/session/";
    static final int ID_BYTES = 16;
    static final int ID_CHARS = 22;

    private static final SecureRandom RANDOM = new SecureRandom();

    private SessionPaths() {
    }

    /** A new id that cannot be guessed. */
    static String newId() {
        byte[] id = new byte[ID_BYTES];
        RANDOM.nextBytes(id);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(id);
    }

    static String path(String id) {
        return PREFIX + id;
    }

    /** Whether a normalised path is {@code /session} or below it: never a topic. */
    public static boolean isReserved(String normalisedPath) {
        return normalisedPath.equals("/session") || normalisedPath.startsWith(PREFIX);
    }

    /** The id in {@code /session/<id>}, or null if the path is not of that form. */
    static String idOf(String normalisedPath) {
        if (!normalisedPath.startsWith(PREFIX) || normalisedPath.length() != PREFIX.length() + ID_CHARS) {
            return null;
        }
        for (int i = PREFIX.length(); i < normalisedPath.length(); i++) {
            char c = normalisedPath.charAt(i);
            boolean ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
            if (!ok) {
                return null;
            }
        }
        return normalisedPath.substring(PREFIX.length());
    }
}
